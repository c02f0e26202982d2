//! Lets every gRPC stack talk to the daemon over its Unix socket. grpc-core clients (Python's
//! `grpcio`, C++, Ruby, PHP, C#) and grpc-java send the socket's path as the HTTP/2 `:authority`
//! (`tmp%2Fllmctl.sock`), which is no URI authority; the HTTP/2 server resets such a request with
//! PROTOCOL_ERROR. This sits between the socket and the server, on the bytes the client sends:
//!
//! - Frames pass through untouched until the first header block is complete. If its
//!   `:authority` is valid (or absent), the connection is left alone from then on: no copy,
//!   no decoding.
//! - If not, every header block of the connection is decoded (HPACK, keeping the client's
//!   dynamic table) and written again with `:authority: localhost`, each field as a literal
//!   the server's decoder adds to no table, so the two tables never need to agree.
//!
//! Anything it cannot follow (a broken frame sequence, an undecodable block, a block past
//! `MAX_BLOCK`) is handed on as it came, and the connection left alone: the server then answers
//! as it would have.

use std::borrow::Cow;

/// What the client's authority becomes when it is not one.
pub const LOCALHOST: &[u8] = b"localhost";

const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// Every HTTP/2 peer accepts frames of this size (the protocol's floor for the maximum).
const MAX_FRAME: usize = 16_384;
/// The largest header block followed; a larger one is handed on as it came.
pub const MAX_BLOCK: usize = 1 << 20;

enum Mode {
    /// Until the first header block is complete.
    Sniffing,
    /// The client's authorities are fine: bytes go through untouched.
    Passthrough,
    /// Header blocks are decoded and written again.
    Rewrite,
}

/// A header block being gathered: its raw frames, and what re-encoding needs.
struct Block {
    raw: Vec<u8>,
    fragment: Vec<u8>,
    stream: u32,
    end_stream: bool,
    priority: Option<[u8; 5]>,
}

/// The rewriter of one connection's client-to-server bytes (after the connection preface).
pub struct AuthorityFix {
    mode: Mode,
    decoder: loona_hpack::Decoder<'static>,
    /// Bytes read that do not yet make a whole frame.
    partial: Vec<u8>,
    block: Option<Block>,
}

impl Default for AuthorityFix {
    fn default() -> Self {
        AuthorityFix {
            mode: Mode::Sniffing,
            decoder: loona_hpack::Decoder::new(),
            partial: Vec::new(),
            block: None,
        }
    }
}

/// Whether `value` would be accepted as an HTTP/2 `:authority`.
fn valid_authority(value: &[u8]) -> bool {
    http::uri::Authority::try_from(value).is_ok()
}

fn frame_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    out.extend_from_slice(&len[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// An HPACK integer with an `n`-bit prefix after `first` (RFC 7541, 5.1).
fn hpack_int(out: &mut Vec<u8>, first: u8, n: u32, mut value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

/// A field as a literal without indexing, with its name spelled out (RFC 7541, 6.2.2).
fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    hpack_int(out, 0x00, 7, name.len());
    out.extend_from_slice(name);
    hpack_int(out, 0x00, 7, value.len());
    out.extend_from_slice(value);
}

impl AuthorityFix {
    /// True once the connection's bytes can go to the server as they are read.
    pub fn is_passthrough(&self) -> bool {
        matches!(self.mode, Mode::Passthrough)
    }

    /// Takes bytes the client sent; appends what the server should read to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.is_passthrough() {
            out.extend_from_slice(input);
            return;
        }
        self.partial.extend_from_slice(input);
        let mut at = 0;
        while self.partial.len() - at >= FRAME_HEADER {
            let h = &self.partial[at..at + FRAME_HEADER];
            let len = usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
            if self.partial.len() - at < FRAME_HEADER + len {
                break;
            }
            let end = at + FRAME_HEADER + len;
            let frame = self.partial[at..end].to_vec();
            at = end;
            self.frame(&frame, out);
            if self.is_passthrough() {
                out.extend_from_slice(&self.partial[at..]);
                at = self.partial.len();
                break;
            }
        }
        self.partial.drain(..at);
        if self.partial.len() > MAX_BLOCK + FRAME_HEADER {
            self.give_up(out);
        }
    }

    /// The client closed its side: whatever is held goes on as it came.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        self.give_up(out);
    }

    /// Hands on what is held, unchanged, and leaves the connection alone from now on.
    fn give_up(&mut self, out: &mut Vec<u8>) {
        if let Some(b) = self.block.take() {
            out.extend_from_slice(&b.raw);
        }
        out.append(&mut self.partial);
        self.mode = Mode::Passthrough;
    }

    fn frame(&mut self, frame: &[u8], out: &mut Vec<u8>) {
        let (kind, flags) = (frame[3], frame[4]);
        let stream = u32::from_be_bytes([frame[5], frame[6], frame[7], frame[8]]) & 0x7fff_ffff;
        let payload = &frame[FRAME_HEADER..];
        match (&mut self.block, kind) {
            (None, HEADERS) => {
                let Some((priority, fragment)) = headers_payload(flags, payload) else {
                    out.extend_from_slice(frame);
                    self.mode = Mode::Passthrough;
                    return;
                };
                self.block = Some(Block {
                    raw: frame.to_vec(),
                    fragment: fragment.to_vec(),
                    stream,
                    end_stream: flags & END_STREAM != 0,
                    priority,
                });
            }
            (Some(b), CONTINUATION) if b.stream == stream => {
                b.raw.extend_from_slice(frame);
                b.fragment.extend_from_slice(payload);
            }
            (Some(_), _) => {
                // Not a header block's continuation: the server will say what is wrong.
                self.give_up(out);
                out.extend_from_slice(frame);
                return;
            }
            (None, _) => {
                out.extend_from_slice(frame);
                return;
            }
        }
        let too_big = self
            .block
            .as_ref()
            .is_some_and(|b| b.fragment.len() > MAX_BLOCK);
        if too_big {
            self.give_up(out);
        } else if flags & END_HEADERS != 0 {
            if let Some(b) = self.block.take() {
                self.block_done(b, out);
            }
        }
    }

    fn block_done(&mut self, b: Block, out: &mut Vec<u8>) {
        let mut fields: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let decoded = self
            .decoder
            .decode_with_cb(&b.fragment, |n: Cow<[u8]>, v: Cow<[u8]>| {
                fields.push((n.into_owned(), v.into_owned()))
            });
        if decoded.is_err() {
            out.extend_from_slice(&b.raw);
            self.mode = Mode::Passthrough;
            return;
        }
        let bad = fields
            .iter()
            .any(|(n, v)| n.as_slice() == b":authority" && !valid_authority(v));
        match self.mode {
            Mode::Sniffing if !bad => {
                out.extend_from_slice(&b.raw);
                self.mode = Mode::Passthrough;
            }
            _ => {
                self.mode = Mode::Rewrite;
                write_block(&b, &fields, out);
            }
        }
    }
}

/// The priority fields and the fragment of a HEADERS frame's payload, without its padding.
fn headers_payload(flags: u8, payload: &[u8]) -> Option<(Option<[u8; 5]>, &[u8])> {
    let (mut body, pad) = if flags & PADDED != 0 {
        let (&pad, rest) = payload.split_first()?;
        (rest, usize::from(pad))
    } else {
        (payload, 0)
    };
    body = body.get(..body.len().checked_sub(pad)?)?;
    let priority = if flags & PRIORITY != 0 {
        let p: [u8; 5] = body.get(..5)?.try_into().ok()?;
        body = &body[5..];
        Some(p)
    } else {
        None
    };
    Some((priority, body))
}

/// The block again, every field a literal, the authority replaced when it is not one, in
/// frames no larger than any peer accepts.
fn write_block(b: &Block, fields: &[(Vec<u8>, Vec<u8>)], out: &mut Vec<u8>) {
    let mut fragment = Vec::with_capacity(b.fragment.len() + 64);
    for (name, value) in fields {
        let value: &[u8] = if name.as_slice() == b":authority" && !valid_authority(value) {
            LOCALHOST
        } else {
            value
        };
        literal(&mut fragment, name, value);
    }
    let first_room = MAX_FRAME - if b.priority.is_some() { 5 } else { 0 };
    let (first, rest) = fragment.split_at(fragment.len().min(first_room));
    let mut flags = if b.end_stream { END_STREAM } else { 0 };
    if b.priority.is_some() {
        flags |= PRIORITY;
    }
    if rest.is_empty() {
        flags |= END_HEADERS;
    }
    let priority = b.priority.as_ref().map_or(&[][..], |p| &p[..]);
    frame_header(out, priority.len() + first.len(), HEADERS, flags, b.stream);
    out.extend_from_slice(priority);
    out.extend_from_slice(first);
    let mut chunks = rest.chunks(MAX_FRAME).peekable();
    while let Some(chunk) = chunks.next() {
        let flags = if chunks.peek().is_none() {
            END_HEADERS
        } else {
            0
        };
        frame_header(out, chunk.len(), CONTINUATION, flags, b.stream);
        out.extend_from_slice(chunk);
    }
}

#[cfg(test)]
#[path = "authority_tests.rs"]
mod tests;
