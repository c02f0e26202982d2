//! Exit codes (sysexits.h) and one-line error reporting.

use std::process::ExitCode;

/// Bad command line or config.
pub const USAGE: u8 = 64;
/// A request that can never fit.
pub const DATAERR: u8 = 65;
/// An unknown lease.
pub const NOINPUT: u8 = 66;
/// No daemon answering on the socket.
pub const UNAVAILABLE: u8 = 69;
pub const SOFTWARE: u8 = 70;
/// The socket is taken by another daemon.
pub const CANTCREAT: u8 = 73;
/// State could not be written to the disk.
pub const IOERR: u8 = 74;
/// Not allowed: another user's lease or claim.
pub const NOPERM: u8 = 77;
/// Not granted in time, or the daemon's own bounds are full: try again later.
pub const TEMPFAIL: u8 = 75;

pub fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    eprintln!("llmctl: {message}");
    ExitCode::from(code)
}

/// Maps a gRPC status from the daemon to an exit code and its message.
pub fn status(s: &tonic::Status) -> ExitCode {
    use tonic::Code;
    let code = match s.code() {
        Code::InvalidArgument => USAGE,
        Code::FailedPrecondition => DATAERR,
        Code::NotFound => NOINPUT,
        Code::Unavailable => UNAVAILABLE,
        Code::ResourceExhausted => TEMPFAIL,
        Code::PermissionDenied => NOPERM,
        _ => SOFTWARE,
    };
    fail(code, s.message())
}
