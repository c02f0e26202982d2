//! grpc.health.v1 and server reflection, on the socket and on an optional TCP address.

use crate::harness::*;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

fn check(service: &str) -> HealthCheckRequest {
    HealthCheckRequest {
        service: service.into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_serving_until_the_daemon_stops() {
    let mut d = Daemon::start("");
    let channel = llmctl_client::channel(&d.socket).await.expect("channel");
    let mut h = HealthClient::new(channel);
    for service in ["", "llmctl.v1.Limiter"] {
        let r = h.check(check(service)).await.expect("check").into_inner();
        assert_eq!(r.status, ServingStatus::Serving as i32, "{service:?}");
    }
    let unknown = h
        .check(check("no.such.Service"))
        .await
        .expect_err("unknown");
    assert_eq!(unknown.code(), tonic::Code::NotFound);
    // A watcher hears NOT_SERVING when the daemon begins to stop.
    let mut watch = h.watch(check("")).await.expect("watch").into_inner();
    let first = watch.message().await.expect("stream").expect("status");
    assert_eq!(first.status, ServingStatus::Serving as i32);
    let pid = d.child.as_ref().expect("running").id().to_string();
    std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    let next = watch.message().await.expect("stream").expect("status");
    assert_eq!(next.status, ServingStatus::NotServing as i32);
    d.child.take().expect("running").wait().expect("exit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_services_in_both_versions() {
    use tokio_stream::StreamExt;
    let d = Daemon::start("");
    let channel = llmctl_client::channel(&d.socket).await.expect("channel");
    {
        use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
        use tonic_reflection::pb::v1::ServerReflectionRequest;
        let mut c = ServerReflectionClient::new(channel.clone());
        let req = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut answers = c
            .server_reflection_info(tokio_stream::iter([req]))
            .await
            .expect("reflection v1")
            .into_inner();
        let answer = answers.next().await.expect("an answer").expect("ok");
        let Some(MessageResponse::ListServicesResponse(list)) = answer.message_response else {
            panic!("not a list: {answer:?}");
        };
        let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
        assert!(
            names.contains(&"llmctl.v1.Limiter".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"grpc.health.v1.Health".to_string()),
            "{names:?}"
        );
    }
    {
        use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
        use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
        use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
        use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
        let mut c = ServerReflectionClient::new(channel);
        let req = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::FileContainingSymbol(
                "llmctl.v1.Limiter".into(),
            )),
        };
        let mut answers = c
            .server_reflection_info(tokio_stream::iter([req]))
            .await
            .expect("reflection v1alpha")
            .into_inner();
        let answer = answers.next().await.expect("an answer").expect("ok");
        assert!(
            matches!(
                answer.message_response,
                Some(MessageResponse::FileDescriptorResponse(ref f)) if !f.file_descriptor_proto.is_empty()
            ),
            "{answer:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_on_a_tcp_address_for_probes() {
    let port = free_port();
    let _d = Daemon::start(&format!("[daemon]\nhealth_addr = \"127.0.0.1:{port}\"\n"));
    let url = format!("http://127.0.0.1:{port}");
    let channel = {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match tonic::transport::Endpoint::from_shared(url.clone())
                .expect("url")
                .connect()
                .await
            {
                Ok(c) => break c,
                Err(e) if std::time::Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                Err(e) => panic!("health port: {e}"),
            }
        }
    };
    let r = HealthClient::new(channel)
        .check(check("llmctl.v1.Limiter"))
        .await
        .expect("check")
        .into_inner();
    assert_eq!(r.status, ServingStatus::Serving as i32);
}
