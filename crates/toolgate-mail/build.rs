//! Marks the tests that need the real SMTP server (a Python with aiosmtpd) as ignored when
//! `TOOLGATE_TEST_PYTHON` is unset or empty (`cfg(toolgate_no_python)`), as toolgate-cli's
//! build script does; under CI (`CI` set) nothing is ignored and a missing Python fails.

fn main() {
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=TOOLGATE_TEST_PYTHON");
    println!("cargo::rustc-check-cfg=cfg(toolgate_no_python)");
    let set = std::env::var_os("TOOLGATE_TEST_PYTHON").is_some_and(|v| !v.is_empty());
    if !set && std::env::var_os("CI").is_none() {
        println!("cargo::rustc-cfg=toolgate_no_python");
    }
}
