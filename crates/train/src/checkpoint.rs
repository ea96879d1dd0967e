//! Training checkpoints: parameters, Adam's state, the best epoch so far (its number and
//! parameters) and the run's history in one safetensors file (the JSON state in its
//! metadata), written atomically so an interrupted run never leaves a corrupt checkpoint.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use anyhow::Context;
use deepchess_core::atomic::write_atomic;
use deepchess_core::{ModelKind, StackSpec};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};

use crate::metrics::EpochMetrics;
use crate::nn::adam::Adam;
use crate::nn::params::Params;

/// File name of the checkpoint inside a run directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.safetensors";

/// Everything a run needs to continue exactly where it stopped.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// Epochs completed.
    pub epoch: u32,
    /// Current parameters.
    pub params: Params,
    /// Optimiser state.
    pub adam: Adam,
    /// The best epoch so far by validation metric.
    pub best: Option<Best>,
    /// Metrics of every completed epoch.
    pub history: Vec<EpochMetrics>,
    /// The options the run was started with (a resumed run must match them).
    pub options: serde_json::Value,
    /// The network trained (`None` in checkpoints of earlier versions).
    pub kind: Option<ModelKind>,
    /// The datasets read ([`crate::guard::data_fingerprint`]; null in checkpoints of
    /// earlier versions): a resumed run must read the same.
    pub data: serde_json::Value,
}

/// The parameters of the best epoch so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Best {
    /// Its number, from 1.
    pub epoch: u32,
    /// Its validation metric (higher is better).
    pub metric: f64,
    /// The parameters at its end.
    pub params: Params,
}

#[derive(Serialize, Deserialize)]
struct State {
    epoch: u32,
    adam_steps: BTreeMap<String, u64>,
    stacks: Vec<StackSpec>,
    best_stacks: Option<Vec<StackSpec>>,
    best_metric: Option<f64>,
    /// Absent from the checkpoints of earlier versions, which did not record it.
    #[serde(default)]
    best_epoch: Option<u32>,
    history: Vec<EpochMetrics>,
    options: serde_json::Value,
    /// Absent from the checkpoints of earlier versions.
    #[serde(default)]
    kind: Option<ModelKind>,
    /// Absent from the checkpoints of earlier versions.
    #[serde(default)]
    data: serde_json::Value,
}

impl Checkpoint {
    /// Writes the checkpoint to `path` atomically.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let state = State {
            epoch: self.epoch,
            adam_steps: self.adam.steps.clone(),
            stacks: self.params.stacks.clone(),
            best_stacks: self.best.as_ref().map(|b| b.params.stacks.clone()),
            best_metric: self.best.as_ref().map(|b| b.metric),
            best_epoch: self.best.as_ref().map(|b| b.epoch),
            history: self.history.clone(),
            options: self.options.clone(),
            kind: self.kind,
            data: self.data.clone(),
        };
        let mut buffers: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
        let mut add = |prefix: &str, map: &BTreeMap<String, Vec<f32>>| {
            for (name, v) in map {
                buffers.push((
                    format!("{prefix}{name}"),
                    vec![v.len()],
                    v.iter().flat_map(|x| x.to_le_bytes()).collect(),
                ));
            }
        };
        add("param/", &self.params.values);
        add("adam_m/", &self.adam.m);
        add("adam_v/", &self.adam.v);
        if let Some(best) = &self.best {
            add("best/", &best.params.values);
        }
        let views = buffers.iter().map(|(n, shape, bytes)| {
            (n.as_str(), TensorView::new(Dtype::F32, shape.clone(), bytes).expect("consistent view"))
        });
        let metadata = HashMap::from([("state".to_string(), serde_json::to_string(&state)?)]);
        let bytes = safetensors::serialize(views, Some(metadata)).context("serialising the checkpoint")?;
        write_atomic(path, &bytes).with_context(|| format!("writing checkpoint {}", path.display()))
    }

    /// Reads a checkpoint written by [`Checkpoint::save`].
    pub fn load(path: &Path) -> anyhow::Result<Checkpoint> {
        let bytes = std::fs::read(path).with_context(|| format!("reading checkpoint {}", path.display()))?;
        let bad = |what: String| anyhow::anyhow!("{}: not a deepchess checkpoint: {what}", path.display());
        let (_, meta) = SafeTensors::read_metadata(&bytes).map_err(|e| bad(e.to_string()))?;
        let st = SafeTensors::deserialize(&bytes).map_err(|e| bad(e.to_string()))?;
        let json =
            meta.metadata().as_ref().and_then(|m| m.get("state")).ok_or_else(|| bad("no state metadata".into()))?;
        let state: State = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
        let mut maps: BTreeMap<&str, BTreeMap<String, Vec<f32>>> = BTreeMap::new();
        for (name, view) in st.tensors() {
            let (prefix, tensor) = name.split_once('/').ok_or_else(|| bad(format!("tensor `{name}`")))?;
            let prefix = ["param", "adam_m", "adam_v", "best"]
                .into_iter()
                .find(|p| *p == prefix)
                .ok_or_else(|| bad(format!("tensor `{name}`")))?;
            let values =
                view.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
            maps.entry(prefix).or_default().insert(tensor.to_string(), values);
        }
        let mut take = |k: &str| maps.remove(k).unwrap_or_default();
        let params = Params { stacks: state.stacks, values: take("param") };
        let adam = Adam { steps: state.adam_steps, m: take("adam_m"), v: take("adam_v") };
        let best = match (state.best_metric, state.best_stacks, state.best_epoch) {
            (Some(metric), Some(stacks), Some(epoch)) => {
                Some(Best { epoch, metric, params: Params { stacks, values: take("best") } })
            }
            (Some(_), Some(_), None) => {
                return Err(bad(
                    "written by an earlier version that did not record the best epoch (start afresh with --force)"
                        .into(),
                ));
            }
            _ => None,
        };
        for (name, shape) in params.stacks.iter().flat_map(StackSpec::tensors) {
            let found = params.values.get(&name).map(Vec::len);
            if found != Some(shape.iter().product()) {
                return Err(bad(format!("tensor `param/{name}` has {found:?} values, expected shape {shape:?}")));
            }
        }
        Ok(Checkpoint {
            epoch: state.epoch,
            params,
            adam,
            best,
            history: state.history,
            options: state.options,
            kind: state.kind,
            data: state.data,
        })
    }

    /// The network a checkpoint trains, read from its header alone (the tensors are not
    /// read): `Ok(None)` for a checkpoint of an earlier version, which did not record it;
    /// an error naming the file when it is not a deepchess checkpoint.
    pub fn peek_kind(path: &Path) -> anyhow::Result<Option<ModelKind>> {
        use std::io::Read;
        let bad = |what: String| anyhow::anyhow!("{}: not a deepchess checkpoint: {what}", path.display());
        let mut file = std::fs::File::open(path).with_context(|| format!("reading checkpoint {}", path.display()))?;
        let mut len = [0u8; 8];
        file.read_exact(&mut len).map_err(|e| bad(e.to_string()))?;
        let len = u64::from_le_bytes(len);
        if len > 100 << 20 {
            return Err(bad(format!("a header of {len} bytes")));
        }
        let mut header = vec![0u8; len as usize];
        file.read_exact(&mut header).map_err(|e| bad(e.to_string()))?;
        let header: serde_json::Value = serde_json::from_slice(&header).map_err(|e| bad(e.to_string()))?;
        let state = header["__metadata__"]["state"].as_str().ok_or_else(|| bad("no state metadata".into()))?;
        let state: serde_json::Value = serde_json::from_str(state).map_err(|e| bad(e.to_string()))?;
        match state.get("kind") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(kind) => serde_json::from_value(kind.clone()).map(Some).map_err(|e| bad(format!("kind: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deepchess_core::Activation;

    fn checkpoint() -> Checkpoint {
        let params = Params::init(vec![StackSpec::new("s", &[3, 2], Activation::Relu)], 1);
        let best = Best { epoch: 2, metric: 0.75, params: Params::init(params.stacks.clone(), 2) };
        Checkpoint {
            epoch: 3,
            params,
            adam: Adam::default(),
            best: Some(best),
            history: Vec::new(),
            options: serde_json::json!({}),
            kind: Some(ModelKind::Value),
            data: serde_json::json!([{ "dir": "/d", "files": { "moves-train.bin": 64 } }]),
        }
    }

    #[test]
    fn the_best_epoch_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        checkpoint().save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap(), checkpoint());
        assert_eq!(Checkpoint::peek_kind(&path).unwrap(), Some(ModelKind::Value));
        std::fs::write(&path, b"{\"not\": \"a checkpoint\"}").unwrap();
        let err = Checkpoint::peek_kind(&path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()) && err.contains("not a deepchess checkpoint"), "{err}");
    }

    #[test]
    fn a_best_without_its_epoch_is_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(CHECKPOINT_FILE);
        checkpoint().save(&path).unwrap();
        // rewrite it as earlier versions did: the same state without `best_epoch`
        let bytes = std::fs::read(&path).unwrap();
        let (_, meta) = SafeTensors::read_metadata(&bytes).unwrap();
        let mut state: serde_json::Value = serde_json::from_str(&meta.metadata().as_ref().unwrap()["state"]).unwrap();
        state.as_object_mut().unwrap().remove("best_epoch");
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let metadata = HashMap::from([("state".to_string(), state.to_string())]);
        std::fs::write(&path, safetensors::serialize(st.tensors(), Some(metadata)).unwrap()).unwrap();
        let err = Checkpoint::load(&path).unwrap_err().to_string();
        assert!(
            err.contains(&path.display().to_string()) && err.contains("best epoch") && err.contains("--force"),
            "{err}"
        );
    }
}
