//! Who is on the other end of the socket: the kernel's credentials of the connecting process.

fn cred<T>(request: &tonic::Request<T>) -> Option<tokio::net::unix::UCred> {
    request
        .extensions()
        .get::<tonic::transport::server::UdsConnectInfo>()
        .and_then(|c| c.peer_cred)
}

/// The user id of the process on the other end of the socket.
pub(crate) fn uid<T>(request: &tonic::Request<T>) -> Option<u32> {
    cred(request).map(|c| c.uid())
}

/// The process on the other end of the socket.
pub(crate) fn pid<T>(request: &tonic::Request<T>) -> Option<u32> {
    cred(request)
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok())
}
