fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["llmctl/v1/limiter.proto"];
    for p in &protos {
        println!("cargo:rerun-if-changed={p}");
    }
    // protox compiles the .proto in-process, so building needs no protoc.
    let fds = protox::compile(protos, ["."])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
