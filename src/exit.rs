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

/// What a shell reports for a command its reader stopped reading (killed by SIGPIPE: 128 + 13).
pub const CLOSED_PIPE: i32 = 141;

/// Ends the process as a closed pipe ends it: quietly, with [`CLOSED_PIPE`].
pub fn closed_pipe() -> ExitCode {
    std::process::exit(CLOSED_PIPE)
}

/// Makes a write to a closed pipe end the process quietly, as `ls | head` ends `ls`: exit
/// status 141, no message, no backtrace. Rust ignores SIGPIPE, so `println!` on a pipe whose
/// reader left panics instead ("failed printing to stdout: Broken pipe"); every other panic
/// is reported as before.
pub fn quiet_on_closed_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_closed_pipe(message) {
            std::process::exit(CLOSED_PIPE);
        }
        report(info);
    }));
}

/// Whether a panic's message is the standard library's for printing to a closed pipe.
fn is_closed_pipe(message: &str) -> bool {
    (message.starts_with("failed printing to stdout")
        || message.starts_with("failed printing to stderr"))
        && message.to_ascii_lowercase().contains("broken pipe")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_closed_pipe_message_is_quiet() {
        let io = std::io::Error::from_raw_os_error(32);
        assert!(super::is_closed_pipe(&format!(
            "failed printing to stdout: {io}"
        )));
        assert!(!super::is_closed_pipe(
            "failed printing to stdout: No space left on device"
        ));
        assert!(!super::is_closed_pipe(
            "called `Option::unwrap()` on a `None` value"
        ));
    }
}
