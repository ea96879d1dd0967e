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
    /// The burn device (without autodiff), or an error naming the option when this build
    /// lacks the backend.
    pub fn device(self) -> anyhow::Result<Device> {
        match self {
            DeviceChoice::Cpu => Ok(Device::flex()),
            DeviceChoice::Wgpu(adapter) => wgpu_device(adapter).ok_or_else(|| {
                anyhow::anyhow!("--device {self}: this build has no GPU backend (rebuild with `cargo build --release -p deepchess-cli --features wgpu`)")
            }),
        }
    }
}

#[cfg(feature = "wgpu")]
fn wgpu_device(adapter: WgpuAdapter) -> Option<Device> {
    use burn::tensor::DeviceKind;
    let kind = match adapter {
        WgpuAdapter::Default => DeviceKind::DefaultDevice,
        WgpuAdapter::Discrete(n) => DeviceKind::DiscreteGpu(n),
        WgpuAdapter::Integrated(n) => DeviceKind::IntegratedGpu(n),
        WgpuAdapter::Virtual(n) => DeviceKind::VirtualGpu(n),
        WgpuAdapter::Cpu => DeviceKind::Cpu,
    };
    Some(Device::wgpu(kind))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu_device(_: WgpuAdapter) -> Option<Device> {
    None
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
    }
}
