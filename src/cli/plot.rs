//! An SVG of an engine run: resident memory over time, and when each stage ran.

use std::path::Path;

use anyhow::{anyhow, Result};
use crossgroth::engine::RunSummary;
use plotters::prelude::*;

const STAGES: [&str; 5] = ["synthesis", "g1_side", "b_g2", "verify", "dealloc"];

pub fn write_svg(s: &RunSummary, path: &Path) -> Result<()> {
    let root = SVGBackend::new(path, (1100, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("plot: {e}"))?;
    let (upper, lower) = root.split_vertically(380);
    let t_max = s.wall_s.max(1e-3);
    let mib = |b: usize| b as f64 / (1u64 << 20) as f64;
    // Show the budget line unless it dwarfs the run, which would flatten the curve.
    let peak = mib(s.peak_resident_bytes);
    let budget = mib(s.memory_budget_bytes);
    let y_max = if budget <= peak * 4.0 {
        budget.max(peak) * 1.1
    } else {
        peak * 1.3
    } + 1.0;
    let mut chart = ChartBuilder::on(&upper)
        .caption(
            "resident anonymous memory (MiB) and budget",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..t_max, 0f64..y_max)
        .map_err(|e| anyhow!("plot: {e}"))?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .draw()
        .map_err(|e| anyhow!("plot: {e}"))?;
    chart
        .draw_series(LineSeries::new(
            s.resident.iter().map(|&(t, b)| (t, mib(b))),
            &BLUE,
        ))
        .map_err(|e| anyhow!("plot: {e}"))?;
    if budget <= y_max {
        chart
            .draw_series(LineSeries::new([(0.0, budget), (t_max, budget)], &RED))
            .map_err(|e| anyhow!("plot: {e}"))?;
    }

    let mut lanes = ChartBuilder::on(&lower)
        .caption("stage activity", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(28)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..t_max, -0.5f64..STAGES.len() as f64 - 0.5)
        .map_err(|e| anyhow!("plot: {e}"))?;
    lanes
        .configure_mesh()
        .y_labels(STAGES.len())
        .y_label_formatter(&|y| {
            STAGES
                .get(y.round() as usize)
                .map_or(String::new(), |s| s.to_string())
        })
        .x_desc("seconds")
        .draw()
        .map_err(|e| anyhow!("plot: {e}"))?;
    for (lane, stage) in STAGES.iter().enumerate() {
        let color = Palette99::pick(lane).to_rgba();
        lanes
            .draw_series(s.activity.iter().filter(|(name, _, _)| name == stage).map(
                |&(_, a, b)| {
                    Rectangle::new(
                        [
                            (a, lane as f64 - 0.35),
                            (b.max(a + t_max * 1e-4), lane as f64 + 0.35),
                        ],
                        color.filled(),
                    )
                },
            ))
            .map_err(|e| anyhow!("plot: {e}"))?;
    }
    root.present().map_err(|e| anyhow!("plot: {e}"))?;
    Ok(())
}
