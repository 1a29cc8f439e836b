//! Marks the tests that drive a real client as ignored, by name, when the client is missing:
//! `cfg(toolgate_no_python)`, `cfg(toolgate_no_node)` and `cfg(toolgate_no_inspector)` are set
//! when `TOOLGATE_TEST_PYTHON`, `TOOLGATE_TEST_NODE` or `TOOLGATE_TEST_INSPECTOR` is unset or
//! empty, and the tests carry `#[cfg_attr(toolgate_no_python, ignore = "...")]`, so `cargo
//! test` lists them as ignored instead of counting them as passed. Under CI (`CI` set) nothing
//! is ignored: a missing client fails its test there. (toolgate-mcp's build script is the same.)

fn main() {
    println!("cargo::rerun-if-env-changed=CI");
    let ci = std::env::var_os("CI").is_some();
    for (var, cfg) in [
        ("TOOLGATE_TEST_PYTHON", "toolgate_no_python"),
        ("TOOLGATE_TEST_NODE", "toolgate_no_node"),
        ("TOOLGATE_TEST_INSPECTOR", "toolgate_no_inspector"),
    ] {
        println!("cargo::rerun-if-env-changed={var}");
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        let set = std::env::var_os(var).is_some_and(|v| !v.is_empty());
        if !set && !ci {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
