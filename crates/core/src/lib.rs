//! Shared foundations of deepchess: the 773-feature position encoding, move-predictor
//! labels, the fixed-size dataset records and files, and the model file format with the
//! network shapes the trainer and the engine agree on. No training framework here.

pub mod arch;
pub mod atomic;
pub mod dataset;
pub mod feature_bits;
pub mod features;
pub mod model;
pub mod move_label;
pub mod packed_games;
pub mod record;
pub mod selfplay_game;

pub use arch::{Activation, ModelKind, StackSpec};
pub use dataset::{Content, Dataset, DatasetWriter, Split};
pub use feature_bits::FeatureBits;
pub use features::{FEATURE_COUNT, SparseFeatures};
pub use model::{Model, ModelCard, ModelError};
pub use move_label::MoveLabel;
pub use record::{GameInfo, PlayedMove, Record};
