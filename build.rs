//! Compiles our trimmed `.proto` files with prost. `protox` parses them in pure Rust,
//! so building needs no system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/xplane.proto",
        "proto/hlo.proto",
        "proto/profile.proto",
    ];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
