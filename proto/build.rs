fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = ["llmctl/v1/limiter.proto"];
    for p in &protos {
        println!("cargo:rerun-if-changed={p}");
    }
    // protox compiles the .proto in-process, so building needs no protoc.
    let fds = protox::compile(protos, ["."])?;
    // The descriptors themselves, for server reflection.
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out.join("llmctl_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
