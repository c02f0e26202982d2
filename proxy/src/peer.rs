//! Who is on the other end of a loopback TCP connection: the user id owning the peer's socket,
//! asked of the kernel by the connection's addresses (Linux's `sock_diag` netlink, the way `ss`
//! reads it). A peer on another host, or a kernel without the interface, tells nothing.

use std::net::{IpAddr, SocketAddr};

/// The uid owning the socket at `peer` connected to `local` (both ends on this host).
#[cfg(target_os = "linux")]
pub fn uid(peer: SocketAddr, local: SocketAddr) -> Option<u32> {
    // An IPv4 peer on a dual-stack socket reads as ::ffff:a.b.c.d: asked as IPv4.
    let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
    let (peer, local) = (canonical(peer), canonical(local));
    if !peer.ip().is_loopback() && peer.ip() != local.ip() {
        return None;
    }
    diag::ask(peer, local)
}

#[cfg(not(target_os = "linux"))]
pub fn uid(_peer: SocketAddr, _local: SocketAddr) -> Option<u32> {
    None
}

/// An address as `inet_diag_sockid` writes it: four 32-bit words, network order.
fn words(ip: IpAddr) -> [u8; 16] {
    let mut out = [0u8; 16];
    match ip {
        IpAddr::V4(v4) => out[..4].copy_from_slice(&v4.octets()),
        IpAddr::V6(v6) => out.copy_from_slice(&v6.octets()),
    }
    out
}

#[cfg(target_os = "linux")]
mod diag {
    use super::words;
    use rustix::net::netlink::{self, SocketAddrNetlink};
    use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType};
    use std::net::SocketAddr;

    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLM_F_REQUEST: u16 = 1;
    const AF_INET: u8 = 2;
    const AF_INET6: u8 = 10;
    const IPPROTO_TCP: u8 = 6;
    /// `struct nlmsghdr`, then `struct inet_diag_req_v2`.
    const HEADER: usize = 16;
    const REQUEST: usize = 56;
    /// Where `idiag_uid` sits in the answer (after the header: family, state, timer,
    /// retransmits, the 48-byte socket id, expires, rqueue, wqueue).
    const UID_AT: usize = HEADER + 4 + 48 + 12;

    /// The request for the one socket whose own end is `src` and whose other end is `dst`.
    pub(super) fn request(src: SocketAddr, dst: SocketAddr) -> [u8; HEADER + REQUEST] {
        let mut m = [0u8; HEADER + REQUEST];
        m[0..4].copy_from_slice(&((HEADER + REQUEST) as u32).to_ne_bytes());
        m[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
        m[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
        m[8..12].copy_from_slice(&1u32.to_ne_bytes());
        let r = &mut m[HEADER..];
        r[0] = if src.is_ipv4() { AF_INET } else { AF_INET6 };
        r[1] = IPPROTO_TCP;
        // Every state.
        r[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
        let id = &mut r[8..];
        id[0..2].copy_from_slice(&src.port().to_be_bytes());
        id[2..4].copy_from_slice(&dst.port().to_be_bytes());
        id[4..20].copy_from_slice(&words(src.ip()));
        id[20..36].copy_from_slice(&words(dst.ip()));
        // No interface; no cookie (INET_DIAG_NOCOOKIE).
        id[40..48].copy_from_slice(&[0xff; 8]);
        m
    }

    /// The uid in an answer to [`request`], if it found the socket.
    pub(super) fn uid_in(answer: &[u8]) -> Option<u32> {
        let kind = u16::from_ne_bytes(answer.get(4..6)?.try_into().ok()?);
        // An error (NLMSG_ERROR: no such socket) or anything else.
        if kind != SOCK_DIAG_BY_FAMILY {
            return None;
        }
        Some(u32::from_ne_bytes(
            answer.get(UID_AT..UID_AT + 4)?.try_into().ok()?,
        ))
    }

    pub(super) fn ask(peer: SocketAddr, local: SocketAddr) -> Option<u32> {
        let fd = rustix::net::socket(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            Some(netlink::SOCK_DIAG),
        )
        .ok()?;
        // The peer's socket: its own end is `peer`, its other end us.
        rustix::net::sendto(
            &fd,
            &request(peer, local),
            SendFlags::empty(),
            &SocketAddrNetlink::new(0, 0),
        )
        .ok()?;
        let mut buf = [0u8; 512];
        // The kernel answers within the send: nothing to wait for.
        let (got, _) = rustix::net::recv(&fd, &mut buf[..], RecvFlags::DONTWAIT).ok()?;
        uid_in(&buf[..got])
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_uid_of_a_loopback_peer_is_the_one_running_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let client =
            std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (server, peer) = listener.accept().expect("accept");
        let local = server.local_addr().expect("local");
        assert_eq!(peer, client.local_addr().expect("client addr"));
        let mine = rustix::process::getuid().as_raw();
        assert_eq!(uid(peer, local), Some(mine));
        // A socket that is not there tells nothing.
        let gone = SocketAddr::from(([127, 0, 0, 1], 1));
        assert_eq!(uid(gone, local), None);
    }
}
