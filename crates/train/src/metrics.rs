//! Per-epoch metrics: the CSV table and the PNG plot of the curves written next to a
//! run's checkpoint.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::Context;
use deepchess_core::atomic::{self, write_atomic};
use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// One row of the metrics table: one epoch of one network or stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochMetrics {
    /// Epoch number, from 1.
    pub epoch: u32,
    /// Which network or training stage the row is about (for example `pretrain.1`).
    pub stage: String,
    /// Mean training loss over the epoch (absent for a row that only measures).
    pub train_loss: Option<f64>,
    /// Training accuracy over the epoch (absent where accuracy means nothing).
    pub train_accuracy: Option<f64>,
    /// Validation loss.
    pub validation_loss: f64,
    /// Validation accuracy.
    pub validation_accuracy: Option<f64>,
    /// Learning rate used.
    pub lr: f64,
    /// Training samples (positions or pairs) per second.
    pub samples_per_second: f64,
}

const HEADER: &str = "epoch,stage,train_loss,train_accuracy,validation_loss,validation_accuracy,lr,samples_per_second";

/// The CSV text of `rows`.
pub fn csv(rows: &[EpochMetrics]) -> String {
    let opt = |v: Option<f64>| v.map(|v| format!("{v:.6}")).unwrap_or_default();
    let mut out = format!("{HEADER}\n");
    for r in rows {
        out += &format!(
            "{},{},{},{},{:.6},{},{:.4e},{:.1}\n",
            r.epoch,
            r.stage,
            opt(r.train_loss),
            opt(r.train_accuracy),
            r.validation_loss,
            opt(r.validation_accuracy),
            r.lr,
            r.samples_per_second
        );
    }
    out
}

/// Writes `metrics.csv` and `metrics.png` into `dir`.
pub fn write(dir: &Path, rows: &[EpochMetrics]) -> anyhow::Result<()> {
    write_atomic(&dir.join("metrics.csv"), csv(rows).as_bytes()).context("writing metrics.csv")?;
    let png = dir.join("metrics.png");
    let tmp = atomic::temporary_path_keeping_extension(&png);
    atomic::register_temporary(&tmp);
    let written = plot(&tmp, rows)
        .map_err(|e| anyhow::anyhow!("{}: drawing the plot: {e}", png.display()))
        .and_then(|()| atomic::publish(&tmp, &png).with_context(|| format!("writing {}", png.display())));
    if written.is_err() {
        atomic::remove_temporary(&tmp);
    }
    written
}

/// A sans-serif font from the usual system places, registered once for plotters; `None`
/// when there is none (plots are then drawn without text).
fn font() -> Option<&'static str> {
    static FONT: OnceLock<Option<&'static str>> = OnceLock::new();
    *FONT.get_or_init(|| {
        let candidates = [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/Library/Fonts/Arial.ttf",
            "C:\\Windows\\Fonts\\arial.ttf",
        ];
        let bytes = candidates.iter().find_map(|p| std::fs::read(p).ok())?;
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).ok()?;
        Some("sans-serif")
    })
}

type Series = (String, Vec<(f64, f64)>);

fn series(rows: &[EpochMetrics], value: impl Fn(&EpochMetrics) -> [(&'static str, Option<f64>); 2]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for r in rows {
        for (which, v) in value(r) {
            let Some(v) = v.filter(|v| v.is_finite()) else { continue };
            let name = format!("{} {which}", r.stage);
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, points)) => points.push((f64::from(r.epoch), v)),
                None => out.push((name, vec![(f64::from(r.epoch), v)])),
            }
        }
    }
    out
}

fn plot(path: &Path, rows: &[EpochMetrics]) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, (1200, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 2));
    let losses = series(rows, |r| [("train", r.train_loss), ("validation", Some(r.validation_loss))]);
    let accuracies = series(rows, |r| [("train", r.train_accuracy), ("validation", r.validation_accuracy)]);
    for (panel, (title, data)) in panels.iter().zip([("loss", losses), ("accuracy", accuracies)]) {
        let points = data.iter().flat_map(|(_, p)| p.iter());
        let (mut x1, mut y0, mut y1) = (1.0f64, f64::INFINITY, f64::NEG_INFINITY);
        for &(x, y) in points {
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if !y0.is_finite() {
            continue;
        }
        let pad = ((y1 - y0) * 0.05).max(1e-6);
        let mut builder = ChartBuilder::on(panel);
        builder.margin(15).x_label_area_size(35).y_label_area_size(60);
        if let Some(f) = font() {
            builder.caption(title, (f, 20));
        }
        let mut chart = builder.build_cartesian_2d(0.5..x1 + 0.5, (y0 - pad)..(y1 + pad))?;
        let mut mesh = chart.configure_mesh();
        if let Some(f) = font() {
            mesh.x_desc("epoch").label_style((f, 13));
        } else {
            mesh.disable_x_axis().disable_y_axis().x_labels(0).y_labels(0);
        }
        mesh.draw()?;
        for (k, (name, points)) in data.iter().enumerate() {
            let colour = Palette99::pick(k).to_rgba();
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            let line = chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2)))?;
            if font().is_some() {
                line.label(name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2)));
            }
        }
        if let Some(f) = font() {
            chart
                .configure_series_labels()
                .label_font((f, 12))
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(epoch: u32, loss: f64) -> EpochMetrics {
        EpochMetrics {
            epoch,
            stage: "net".into(),
            train_loss: Some(loss),
            train_accuracy: Some(0.5),
            validation_loss: loss * 1.1,
            validation_accuracy: None,
            lr: 3e-4,
            samples_per_second: 1000.0,
        }
    }

    #[test]
    fn csv_and_png_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let rows = vec![row(1, 0.7), row(2, 0.5)];
        write(dir.path(), &rows).unwrap();
        let text = std::fs::read_to_string(dir.path().join("metrics.csv")).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().nth(2).unwrap().starts_with("2,net,0.500000,0.500000,0.550000,,3.0000e-4,"), "{text}");
        let png = std::fs::read(dir.path().join("metrics.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
