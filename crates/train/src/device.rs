//! `--device`: where burn runs the dense layers of training and evaluation. `cpu` is burn's
//! `flex` backend (always built); `wgpu[:KIND]` is burn's wgpu backend (Vulkan/Metal/DX12),
//! built only with the cargo feature `wgpu`. The sparse first layer and Adam run on the
//! host in every case.

use std::fmt;
use std::str::FromStr;

use burn::tensor::Device;

/// The device a run computes on, as given to `--device`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// burn's `flex` CPU backend.
    #[default]
    Cpu,
    /// burn's wgpu backend on an adapter of this kind.
    Wgpu(WgpuAdapter),
}

/// Which wgpu adapter `--device wgpu[:KIND[:N]]` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgpuAdapter {
    /// wgpu's choice (a high-power GPU first; `CUBECL_WGPU_DEFAULT_DEVICE` overrides it).
    Default,
    /// The `n`-th discrete GPU.
    Discrete(usize),
    /// The `n`-th integrated GPU.
    Integrated(usize),
    /// The `n`-th virtual GPU.
    Virtual(usize),
    /// A software adapter on the CPU (for example Mesa's lavapipe).
    Cpu,
}

impl FromStr for DeviceChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<DeviceChoice, String> {
        let bad =
            || format!("unknown device {s:?}: expected cpu, wgpu, wgpu:cpu, or wgpu:discrete|integrated|virtual[:N]");
        let mut parts = s.split(':');
        let backend = parts.next().unwrap_or_default();
        let kind = parts.next();
        let index = match parts.next() {
            Some(n) => Some(n.parse::<usize>().map_err(|_| bad())?),
            None => None,
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        let n = index.unwrap_or(0);
        match (backend, kind, index) {
            ("cpu", None, None) => Ok(DeviceChoice::Cpu),
            ("wgpu", None, None) => Ok(DeviceChoice::Wgpu(WgpuAdapter::Default)),
            ("wgpu", Some("cpu"), None) => Ok(DeviceChoice::Wgpu(WgpuAdapter::Cpu)),
            ("wgpu", Some("discrete"), _) => Ok(DeviceChoice::Wgpu(WgpuAdapter::Discrete(n))),
            ("wgpu", Some("integrated"), _) => Ok(DeviceChoice::Wgpu(WgpuAdapter::Integrated(n))),
            ("wgpu", Some("virtual"), _) => Ok(DeviceChoice::Wgpu(WgpuAdapter::Virtual(n))),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Cpu => write!(f, "cpu"),
            DeviceChoice::Wgpu(WgpuAdapter::Default) => write!(f, "wgpu"),
            DeviceChoice::Wgpu(WgpuAdapter::Cpu) => write!(f, "wgpu:cpu"),
            DeviceChoice::Wgpu(WgpuAdapter::Discrete(n)) => write!(f, "wgpu:discrete:{n}"),
            DeviceChoice::Wgpu(WgpuAdapter::Integrated(n)) => write!(f, "wgpu:integrated:{n}"),
            DeviceChoice::Wgpu(WgpuAdapter::Virtual(n)) => write!(f, "wgpu:virtual:{n}"),
        }
    }
}

impl DeviceChoice {
    /// The burn device (without autodiff), or an error that names the device asked for,
    /// why it cannot be used, what was found instead, and `--device cpu`: this build lacks
    /// the backend, or no adapter of the kind asked for comes up (no working driver).
    pub fn device(self) -> anyhow::Result<Device> {
        match self {
            DeviceChoice::Cpu => Ok(Device::flex()),
            DeviceChoice::Wgpu(adapter) => wgpu_device(self, adapter),
        }
    }
}

/// The error of a `--device` that cannot be used.
fn unusable(choice: DeviceChoice, why: &str, found: &str) -> anyhow::Error {
    anyhow::anyhow!("--device {choice}: {why}; found: {found}; train on the CPU with --device cpu")
}

/// The wgpu device of `adapter`, brought up here (once per process) so that a machine
/// without a usable adapter gets an error rather than a panic on burn's first tensor.
#[cfg(feature = "wgpu")]
fn wgpu_device(choice: DeviceChoice, adapter: WgpuAdapter) -> anyhow::Result<Device> {
    use std::sync::Mutex;

    use burn::tensor::DeviceKind;
    /// The devices brought up so far: burn refuses to bring one up twice.
    static READY: Mutex<Vec<(WgpuAdapter, Device)>> = Mutex::new(Vec::new());
    let mut ready = READY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, device)) = ready.iter().find(|(a, _)| *a == adapter) {
        return Ok(device.clone());
    }
    let kind = match adapter {
        WgpuAdapter::Default => DeviceKind::DefaultDevice,
        WgpuAdapter::Discrete(n) => DeviceKind::DiscreteGpu(n),
        WgpuAdapter::Integrated(n) => DeviceKind::IntegratedGpu(n),
        WgpuAdapter::Virtual(n) => DeviceKind::VirtualGpu(n),
        WgpuAdapter::Cpu => DeviceKind::Cpu,
    };
    let device = Device::wgpu_options()
        .device_kind(kind)
        .init()
        .map_err(|e| unusable(choice, &format!("no usable wgpu adapter ({e})"), &wgpu_adapters()))?;
    ready.push((adapter, device.clone()));
    Ok(device)
}

/// The adapters wgpu finds on every graphics API, in words.
#[cfg(feature = "wgpu")]
fn wgpu_adapters() -> String {
    use burn::tensor::wgpu::wgpu;
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::all(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    // Native wgpu answers at once; the future is polled until it does.
    let mut listing = std::pin::pin!(instance.enumerate_adapters(wgpu::Backends::all()));
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let adapters = loop {
        if let std::task::Poll::Ready(adapters) = listing.as_mut().poll(&mut context) {
            break adapters;
        }
        std::thread::yield_now();
    };
    if adapters.is_empty() {
        return "no adapter on any graphics API (no working Vulkan, Metal or DX12 driver)".to_owned();
    }
    let names: Vec<String> = adapters
        .iter()
        .map(|a| {
            let info = a.get_info();
            format!("{} ({:?}, {:?})", info.name, info.device_type, info.backend)
        })
        .collect();
    names.join(", ")
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_device(choice: DeviceChoice, _: WgpuAdapter) -> anyhow::Result<Device> {
    Err(unusable(
        choice,
        "this build has no GPU backend",
        "no wgpu backend (rebuild with `cargo build --release -p deepchess-cli --features wgpu`)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_round_trip() {
        for name in ["cpu", "wgpu", "wgpu:cpu", "wgpu:discrete:0", "wgpu:integrated:1", "wgpu:virtual:2"] {
            let choice: DeviceChoice = name.parse().unwrap();
            assert_eq!(choice.to_string(), name);
        }
        assert_eq!("wgpu:discrete".parse(), Ok(DeviceChoice::Wgpu(WgpuAdapter::Discrete(0))));
        for bad in ["", "gpu", "cuda", "wgpu:", "wgpu:cpu:1", "wgpu:discrete:x", "wgpu:discrete:0:1", "cpu:0"] {
            let err = bad.parse::<DeviceChoice>().unwrap_err();
            assert!(err.contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn cpu_is_always_available() {
        assert!(DeviceChoice::Cpu.device().is_ok());
    }

    #[cfg(not(feature = "wgpu"))]
    #[test]
    fn wgpu_without_the_feature_names_the_option_and_the_fix() {
        let err = DeviceChoice::Wgpu(WgpuAdapter::Default).device().unwrap_err().to_string();
        assert!(err.contains("--device wgpu") && err.contains("--features wgpu"), "{err}");
        assert!(err.contains("--device cpu"), "{err}");
    }

    #[test]
    fn an_unusable_device_names_what_was_asked_found_and_the_way_out() {
        let choice = DeviceChoice::Wgpu(WgpuAdapter::Discrete(1));
        let err = unusable(choice, "no usable wgpu adapter (AdapterUnavailable)", "llvmpipe (Cpu, Vulkan)").to_string();
        assert_eq!(
            err,
            "--device wgpu:discrete:1: no usable wgpu adapter (AdapterUnavailable); found: llvmpipe (Cpu, Vulkan); train on the CPU with --device cpu"
        );
    }
}
