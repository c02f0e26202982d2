//! Which proxy `exec` may hand the host's credentials to: only one it can prove is the user's
//! own. Anyone on the host can listen on a free loopback port and answer the proxy's health
//! path; only the kernel can say whose socket a port is. On Linux the listening sockets and
//! their owners are in `/proc/net/tcp` and `/proc/net/tcp6` (of the caller's own network
//! namespace, the one its connections use). A port is the user's when every listening socket
//! that could take a connection to it (the address itself, or a wildcard on the port) is owned
//! by the user's effective uid.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Whose is the listener at a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Every listening socket that would take a connection is the user's.
    Own,
    /// A listening socket there is another user's.
    Stranger { uid: u32 },
    /// Nothing listens there on this host.
    Nobody,
    /// It cannot be told (what, and why).
    Unknown(String),
}

impl Owner {
    /// Why a proxy with this owner is not trusted, for messages (None: it is).
    pub fn distrust(&self, url: &str) -> Option<String> {
        let me = effective_uid();
        match self {
            Owner::Own => None,
            Owner::Stranger { uid } => Some(format!(
                "the socket listening at {url} belongs to uid {uid}, not to you (uid {me}): it is not trusted with your keys"
            )),
            Owner::Nobody => Some(format!("nothing on this host listens at {url}")),
            Owner::Unknown(why) => Some(format!(
                "who listens at {url} cannot be told ({why}): it is not trusted with your keys"
            )),
        }
    }
}

/// The user whose credentials `exec` carries.
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Whose is the listener at `url` (`http://HOST:PORT`, any path after it).
pub fn owner(url: &str) -> Owner {
    let Some(rest) = url.strip_prefix("http://") else {
        return Owner::Unknown(format!("{url} is not an http:// URL"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let addrs: Vec<SocketAddr> = match authority.to_socket_addrs() {
        Ok(a) => a.collect(),
        Err(e) => return Owner::Unknown(format!("{authority}: {e}")),
    };
    if addrs.is_empty() {
        return Owner::Unknown(format!("{authority} names no address"));
    }
    let listeners = match listening_sockets() {
        Ok(l) => l,
        Err(why) => return Owner::Unknown(why),
    };
    let me = effective_uid();
    // Clients try every address the name resolves to (`localhost`: ::1 first, for many): each
    // must be the user's, and none free for another user to take while the command runs.
    let mut free = Vec::new();
    for &addr in &addrs {
        let mut found = false;
        for l in listeners.iter().filter(|l| takes(l.addr, addr)) {
            found = true;
            if l.uid != me {
                return Owner::Stranger { uid: l.uid };
            }
        }
        if !found {
            free.push(addr);
        }
    }
    match free.len() {
        0 => Owner::Own,
        n if n == addrs.len() => Owner::Nobody,
        _ => Owner::Unknown(format!(
            "{authority} is also {}, where nothing listens and another user could; give the address itself",
            free.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// A listening TCP socket and its owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listener {
    pub addr: SocketAddr,
    pub uid: u32,
}

/// Whether a socket listening at `on` may take a connection to `to`: the same port, and the
/// same address, a wildcard, or (an IPv6 socket) the IPv4 address mapped.
fn takes(on: SocketAddr, to: SocketAddr) -> bool {
    if on.port() != to.port() {
        return false;
    }
    let to_v4 = match to.ip() {
        IpAddr::V4(a) => Some(a),
        IpAddr::V6(a) => a.to_ipv4_mapped(),
    };
    match on.ip() {
        ip if ip.is_unspecified() => true,
        IpAddr::V4(a) => Some(a) == to_v4,
        IpAddr::V6(a) => {
            IpAddr::V6(a) == to.ip()
                || (a.to_ipv4_mapped().is_some() && a.to_ipv4_mapped() == to_v4)
        }
    }
}

#[cfg(target_os = "linux")]
fn listening_sockets() -> Result<Vec<Listener>, String> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        match std::fs::read_to_string(table) {
            Ok(text) => out.extend(parse_listeners(&text)),
            // A kernel without IPv6 has no tcp6.
            Err(e) if table.ends_with('6') && e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("reading {table}: {e}")),
        }
    }
    Ok(out)
}

#[cfg(not(target_os = "linux"))]
fn listening_sockets() -> Result<Vec<Listener>, String> {
    Err("the owners of listening sockets are read only on Linux".into())
}

/// The listening sockets of a `/proc/net/tcp` or `tcp6` table.
pub fn parse_listeners(text: &str) -> Vec<Listener> {
    const LISTEN: &str = "0A";
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid …
            if f.len() < 8 || f[3] != LISTEN {
                return None;
            }
            let addr = parse_address(f[1])?;
            let uid = f[7].parse().ok()?;
            Some(Listener { addr, uid })
        })
        .collect()
}

/// `0100007F:1EB6` (IPv4) or 32 hex digits and a port (IPv6): each 32-bit word as the kernel
/// holds it, printed in the host's byte order.
fn parse_address(field: &str) -> Option<SocketAddr> {
    let (ip, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    // On a little-endian host: 127.0.0.1:8790 by uid 65534, 0.0.0.0:9000 by uid 0; one
    // established connection (01) that is not a listener.
    #[cfg(target_endian = "little")]
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:2256 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 1 1 0 100 0 0 10 0
   1: 00000000:2328 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0100007F:2257 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0 100 0 0 10 0
";
    #[cfg(target_endian = "little")]
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4 1 0 100 0 0 10 0
";

    #[cfg(target_endian = "little")]
    #[test]
    fn the_kernels_tables_read_as_listeners_and_their_owners() {
        let v4 = parse_listeners(TCP);
        assert_eq!(
            v4,
            vec![
                Listener {
                    addr: "127.0.0.1:8790".parse().expect("addr"),
                    uid: 65534
                },
                Listener {
                    addr: "0.0.0.0:9000".parse().expect("addr"),
                    uid: 0
                },
            ]
        );
        let v6 = parse_listeners(TCP6);
        assert_eq!(
            v6,
            vec![Listener {
                addr: "[::1]:8080".parse().expect("addr"),
                uid: 1000
            }]
        );
    }

    #[test]
    fn a_connection_is_taken_by_its_address_a_wildcard_or_a_mapped_address_on_its_port() {
        let to: SocketAddr = "127.0.0.1:8790".parse().expect("addr");
        for on in [
            "127.0.0.1:8790",
            "0.0.0.0:8790",
            "[::]:8790",
            "[::ffff:127.0.0.1]:8790",
        ] {
            assert!(takes(on.parse().expect("addr"), to), "{on}");
        }
        for on in ["127.0.0.2:8790", "127.0.0.1:8791", "[::1]:8790"] {
            assert!(!takes(on.parse().expect("addr"), to), "{on}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_port_this_process_listens_on_is_its_own_and_a_closed_one_nobodys() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/openai/v1", l.local_addr().expect("addr"));
        assert_eq!(owner(&url), Owner::Own);
        assert_eq!(Owner::Own.distrust(&url), None);
        drop(l);
        assert_eq!(owner(&url), Owner::Nobody);
        assert!(matches!(owner("https://x"), Owner::Unknown(_)));
        // A name of two addresses, one of them free: not the user's to vouch for.
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let both_free = std::net::TcpListener::bind(("::1", port)).is_ok();
        if both_free && "localhost:1".to_socket_addrs().is_ok_and(|a| a.count() > 1) {
            assert!(
                matches!(
                    owner(&format!("http://localhost:{port}")),
                    Owner::Unknown(_)
                ),
                "localhost's ::1 is free"
            );
        }
    }
}
