//! The rewriter against header blocks a client's HPACK encoder makes (dynamic table and all),
//! read back as the server's decoder would.

use super::*;

type Fields = Vec<(Vec<u8>, Vec<u8>)>;

fn request(authority: &str, extra: usize) -> Fields {
    let mut f: Fields = vec![
        (b":method".to_vec(), b"POST".to_vec()),
        (b":scheme".to_vec(), b"http".to_vec()),
        (b":path".to_vec(), b"/llmctl.v1.Limiter/Ping".to_vec()),
        (b":authority".to_vec(), authority.as_bytes().to_vec()),
        (b"content-type".to_vec(), b"application/grpc".to_vec()),
        (b"te".to_vec(), b"trailers".to_vec()),
    ];
    if extra > 0 {
        f.push((b"x-big".to_vec(), vec![b'a'; extra]));
    }
    f
}

/// A client: one encoder for the connection, a HEADERS frame (and CONTINUATIONs past
/// `max_frame`) per request, each followed by a DATA frame.
struct Client {
    encoder: loona_hpack::Encoder<'static>,
}

impl Client {
    fn new() -> Client {
        Client {
            encoder: loona_hpack::Encoder::new(),
        }
    }

    fn call(&mut self, stream: u32, fields: &Fields, max_frame: usize, flags: u8) -> Vec<u8> {
        let block = self
            .encoder
            .encode(fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice())));
        let mut out = Vec::new();
        let chunks: Vec<&[u8]> = block.chunks(max_frame).collect();
        for (i, c) in chunks.iter().enumerate() {
            let last = i + 1 == chunks.len();
            let (kind, mut f) = if i == 0 {
                (HEADERS, flags)
            } else {
                (CONTINUATION, 0)
            };
            if last {
                f |= END_HEADERS;
            }
            let mut payload = Vec::new();
            if i == 0 && flags & PADDED != 0 {
                payload.push(3);
            }
            if i == 0 && flags & PRIORITY != 0 {
                payload.extend_from_slice(&[0, 0, 0, 0, 15]);
            }
            payload.extend_from_slice(c);
            if i == 0 && flags & PADDED != 0 {
                payload.extend_from_slice(&[0, 0, 0]);
            }
            frame_header(&mut out, payload.len(), kind, f, stream);
            out.extend_from_slice(&payload);
        }
        frame_header(&mut out, 5, 0x0, END_STREAM, stream);
        out.extend_from_slice(&[0, 0, 0, 0, 0]);
        out
    }
}

/// A SETTINGS frame, as a client sends first.
fn settings() -> Vec<u8> {
    let mut out = Vec::new();
    frame_header(&mut out, 6, 0x4, 0, 0);
    out.extend_from_slice(&[0, 3, 0, 0, 0, 100]);
    out
}

/// The server's view: frames, with each header block decoded.
#[derive(Debug, PartialEq)]
enum Seen {
    Block {
        stream: u32,
        flags: u8,
        fields: Fields,
    },
    Frame(Vec<u8>),
}

fn server_reads(bytes: &[u8]) -> Vec<Seen> {
    let mut decoder = loona_hpack::Decoder::new();
    let mut seen = Vec::new();
    let mut at = 0;
    let mut block: Option<(u32, u8, Vec<u8>)> = None;
    while at < bytes.len() {
        let h = &bytes[at..at + FRAME_HEADER];
        let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
        assert!(len <= MAX_FRAME, "a frame of {len} bytes");
        let (kind, flags) = (h[3], h[4]);
        let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]);
        let payload = &bytes[at + FRAME_HEADER..at + FRAME_HEADER + len];
        at += FRAME_HEADER + len;
        match kind {
            HEADERS => {
                let (_, frag) = headers_payload(flags, payload).expect("headers payload");
                block = Some((stream, flags & !(END_HEADERS | PADDED), frag.to_vec()));
            }
            CONTINUATION => block
                .as_mut()
                .expect("a block")
                .2
                .extend_from_slice(payload),
            _ => {
                seen.push(Seen::Frame(bytes[at - FRAME_HEADER - len..at].to_vec()));
                continue;
            }
        }
        if flags & END_HEADERS != 0 {
            let (stream, flags, frag) = block.take().expect("a block");
            let fields = decoder
                .decode(&frag)
                .expect("the server decodes every block")
                .into_iter()
                .collect();
            seen.push(Seen::Block {
                stream,
                flags,
                fields,
            });
        }
    }
    seen
}

/// What the server reads when the client's bytes come in chunks of `chunk`, and whether the
/// connection was left alone before it ended.
fn fed(input: &[u8], chunk: usize) -> (Vec<u8>, bool) {
    let mut fix = AuthorityFix::default();
    let mut out = Vec::new();
    for c in input.chunks(chunk) {
        fix.feed(c, &mut out);
    }
    let passthrough = fix.is_passthrough();
    fix.finish(&mut out);
    (out, passthrough)
}

#[test]
fn a_valid_authority_leaves_the_connection_untouched() {
    let mut c = Client::new();
    let mut input = settings();
    for (i, a) in ["localhost", "localhost", "tmp%2Fsock"].iter().enumerate() {
        input.extend(c.call(1 + 2 * i as u32, &request(a, 0), MAX_FRAME, 0));
    }
    for chunk in [1, 7, 4096, input.len()] {
        let (out, passthrough) = fed(&input, chunk);
        assert_eq!(out, input, "chunks of {chunk}");
        assert!(passthrough);
    }
}

#[test]
fn a_socket_path_authority_becomes_localhost_on_every_request() {
    let mut c = Client::new();
    let mut input = settings();
    let mut expected = vec![Seen::Frame(settings())];
    for i in 0..4u32 {
        let fields = request("tmp%2Fllmctl%2Fllmctl.sock", 0);
        let call = c.call(1 + 2 * i, &fields, MAX_FRAME, 0);
        input.extend(&call);
        let mut want = fields.clone();
        want[3].1 = LOCALHOST.to_vec();
        expected.push(Seen::Block {
            stream: 1 + 2 * i,
            flags: 0,
            fields: want,
        });
        // The DATA frame after each block goes through as it came.
        expected.push(Seen::Frame(call[call.len() - 14..].to_vec()));
    }
    for chunk in [1, 5, 100, input.len()] {
        let (out, passthrough) = fed(&input, chunk);
        assert_eq!(server_reads(&out), expected, "chunks of {chunk}");
        assert!(!passthrough);
    }
}

#[test]
fn large_padded_and_prioritised_blocks_are_written_in_frames_any_server_takes() {
    let mut c = Client::new();
    let fields = request("/run/llmctl.sock", 40_000);
    let input = c.call(1, &fields, 60_000, PADDED | PRIORITY);
    let (out, _) = fed(&input, 999);
    let mut want = fields.clone();
    want[3].1 = LOCALHOST.to_vec();
    let seen = server_reads(&out);
    assert_eq!(
        seen[0],
        Seen::Block {
            stream: 1,
            flags: PRIORITY,
            fields: want
        }
    );
    // 40 kB of header: a HEADERS frame and two CONTINUATIONs.
    assert!(out.len() > 2 * MAX_FRAME && seen.len() == 2);
}

#[test]
fn what_it_cannot_follow_goes_on_as_it_came() {
    // A CONTINUATION with no block before it.
    let mut input = Vec::new();
    frame_header(&mut input, 3, CONTINUATION, END_HEADERS, 1);
    input.extend_from_slice(&[1, 2, 3]);
    let (out, passthrough) = fed(&input, 2);
    assert_eq!(out, input);
    assert!(!passthrough, "a stray frame decides nothing");
    // A block that is no HPACK.
    let mut input = Vec::new();
    frame_header(&mut input, 2, HEADERS, END_HEADERS, 1);
    input.extend_from_slice(&[0xff, 0xff]);
    let (out, passthrough) = fed(&input, 1);
    assert_eq!((out, passthrough), (input, true));
    // A connection that ends inside a frame.
    let mut c = Client::new();
    let call = c.call(1, &request("a/b", 0), MAX_FRAME, 0);
    let cut = &call[..call.len() - 20];
    let (out, _) = fed(cut, 4);
    assert_eq!(out, cut);
}
