//! An SVG of an engine run: resident memory over time (with the budget, or why it
//! is left out), and when each stage ran, one lane per stage with queue waits,
//! host work, device work and frees told apart by colour and a legend. A stage
//! shorter than a pixel is drawn a pixel and a half wide, so that none vanishes.

use anyhow::{anyhow, Result};
use crossgroth::engine::RunSummary;
use plotters::prelude::*;

use super::output::Output;

/// What a lane's intervals are.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Queue,
    Host,
    Device,
    Free,
}

/// Lanes, top to bottom, in the order a proof goes through them.
const LANES: [(&str, Kind); 13] = [
    ("queue_synthesis", Kind::Queue),
    ("synthesis", Kind::Host),
    ("queue_device", Kind::Queue),
    ("g1_side", Kind::Device),
    ("h", Kind::Device),
    ("msm_h", Kind::Device),
    ("msm_l", Kind::Device),
    ("msm_a", Kind::Device),
    ("msm_b_g1", Kind::Device),
    ("b_g2", Kind::Host),
    ("assemble", Kind::Host),
    ("verify", Kind::Host),
    ("dealloc", Kind::Free),
];

fn colour(kind: Kind) -> RGBColor {
    match kind {
        Kind::Queue => RGBColor(190, 190, 190),
        Kind::Host => RGBColor(31, 119, 180),
        Kind::Device => RGBColor(214, 39, 40),
        Kind::Free => RGBColor(44, 160, 44),
    }
}

const WIDTH: u32 = 1100;
const Y_LABELS: u32 = 130;

/// The memory panel's caption: says whether the budget is drawn and, if not, why.
fn memory_caption(peak_mib: f64, budget_mib: f64, drawn: bool) -> String {
    if drawn {
        format!("resident anonymous memory (MiB) and the memory budget ({budget_mib:.0} MiB, red)")
    } else {
        format!(
            "resident anonymous memory (MiB); the budget ({budget_mib:.0} MiB, {:.0}× the peak) is off the scale",
            budget_mib / peak_mib.max(1e-9)
        )
    }
}

pub fn render_svg(s: &RunSummary) -> Result<String> {
    let e = |e: DrawingAreaErrorKind<_>| anyhow!("plot: {e}");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, 900)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (upper, lower) = root.split_vertically(330);
        let t_max = s.wall_s.max(1e-3);
        let mib = |b: usize| b as f64 / (1u64 << 20) as f64;
        // The budget line is drawn unless it dwarfs the run, which would flatten the
        // curve; the caption says which.
        let peak = mib(s.peak_resident_bytes);
        let budget = mib(s.memory_budget_bytes);
        let drawn = budget <= peak * 4.0;
        let y_max = if drawn {
            budget.max(peak) * 1.1
        } else {
            peak * 1.3
        } + 1.0;
        let mut chart = ChartBuilder::on(&upper)
            .caption(memory_caption(peak, budget, drawn), ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(0f64..t_max, 0f64..y_max)
            .map_err(e)?;
        chart.configure_mesh().x_desc("seconds").draw().map_err(e)?;
        chart
            .draw_series(LineSeries::new(
                s.resident.iter().map(|&(t, b)| (t, mib(b))),
                &BLUE,
            ))
            .map_err(e)?
            .label("resident")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], BLUE));
        if drawn {
            chart
                .draw_series(LineSeries::new([(0.0, budget), (t_max, budget)], &RED))
                .map_err(e)?
                .label("budget")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 18, y)], RED));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;

        let counts: Vec<usize> = LANES
            .iter()
            .map(|(name, _)| s.activity.iter().filter(|a| a.0 == *name).count())
            .collect();
        let mut lanes = ChartBuilder::on(&lower)
            .caption(
                "stage activity (count of intervals in brackets)",
                ("sans-serif", 17),
            )
            .margin(12)
            .x_label_area_size(28)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(0f64..t_max, -0.5f64..LANES.len() as f64 - 0.5)
            .map_err(e)?;
        let label = |y: &f64| {
            // Top to bottom: lane 0 at the top.
            let i = LANES.len() as i64 - 1 - y.round() as i64;
            usize::try_from(i)
                .ok()
                .and_then(|i| LANES.get(i).map(|l| format!("{} ({})", l.0, counts[i])))
                .unwrap_or_default()
        };
        lanes
            .configure_mesh()
            .y_labels(LANES.len())
            .y_label_formatter(&label)
            .disable_y_mesh()
            .x_desc("seconds")
            .draw()
            .map_err(e)?;
        // A pixel and a half, in seconds.
        let plot_px = (WIDTH - Y_LABELS - 24) as f64;
        let min_w = t_max * 1.5 / plot_px;
        let mut legend_done = vec![];
        for (lane, (stage, kind)) in LANES.iter().enumerate() {
            let y = (LANES.len() - 1 - lane) as f64;
            let c = colour(*kind);
            let series = lanes
                .draw_series(s.activity.iter().filter(|(name, _, _)| name == stage).map(
                    |&(_, a, b)| {
                        Rectangle::new(
                            [(a, y - 0.35), (b.max(a + min_w), y + 0.35)],
                            c.mix(0.85).filled(),
                        )
                    },
                ))
                .map_err(e)?;
            if !legend_done.contains(kind) {
                legend_done.push(*kind);
                let text = match kind {
                    Kind::Queue => "waiting in a queue",
                    Kind::Host => "host work",
                    Kind::Device => "device work (G1 side: H, MSMs)",
                    Kind::Free => "freeing buffers",
                };
                series.label(text).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled())
                });
            }
        }
        lanes
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

pub fn write_svg(s: &RunSummary, out: &Output) -> Result<()> {
    out.write_bytes(render_svg(s)?.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn summary(budget: usize) -> RunSummary {
        let mut activity = vec![];
        // 32 verifications of 0.1 ms in a 20 s run: each far below a pixel.
        for i in 0..32 {
            let t = 0.5 + i as f64 * 0.6;
            activity.push(("verify".to_string(), t, t + 1e-4));
            activity.push(("msm_h".to_string(), t - 0.2, t - 0.1));
            activity.push(("queue_device".to_string(), t - 0.4, t - 0.3));
        }
        RunSummary {
            proofs: 32,
            jobs_failed: 0,
            wall_s: 20.0,
            proofs_per_s: 1.6,
            steady_proofs_per_s: 1.6,
            peak_resident_bytes: 100 << 20,
            memory_budget_bytes: budget,
            budget_use_while_waiting: None,
            memory_at_peak: None,
            stages: BTreeMap::new(),
            devices: vec![],
            resident: (0..100)
                .map(|i| (i as f64 * 0.2, (50 + i / 2) << 20))
                .collect(),
            activity,
        }
    }

    /// Rectangles of the lanes' colours in the SVG, with their widths.
    fn rect_widths(svg: &str, rgb: RGBColor) -> Vec<f64> {
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", rgb.0, rgb.1, rgb.2);
        svg.lines()
            .filter(|l| l.contains("<rect") && l.contains(&fill))
            .filter_map(|l| {
                let w = l.split("width=\"").nth(1)?.split('"').next()?;
                w.parse().ok()
            })
            .collect()
    }

    #[test]
    fn short_stages_stay_visible_and_every_lane_is_named() {
        let svg = render_svg(&summary(200 << 20)).unwrap();
        // 32 verify rectangles, every one at least a pixel wide.
        let host = rect_widths(&svg, colour(Kind::Host));
        assert!(host.len() >= 32, "{} host rectangles", host.len());
        assert!(host.iter().all(|&w| w >= 1.0), "{host:?}");
        // plotters puts each text on a line of its own.
        let texts: Vec<&str> = svg.lines().collect();
        for (lane, _) in LANES {
            assert!(
                texts.iter().any(|t| t.starts_with(&format!("{lane} ("))),
                "lane {lane} is not labelled"
            );
        }
        assert!(
            texts.contains(&"verify (32)"),
            "the verify lane counts 32 intervals"
        );
        for legend in [
            "waiting in a queue",
            "host work",
            "device work",
            "resident",
            "budget",
        ] {
            assert!(svg.contains(legend), "no legend entry {legend}");
        }
        assert!(svg.contains("and the memory budget (200 MiB, red)"));
    }

    #[test]
    fn a_budget_left_out_is_said_so() {
        let svg = render_svg(&summary(64 << 30)).unwrap();
        assert!(!svg.contains("and the memory budget"));
        assert!(svg.contains("is off the scale"), "the caption says why");
        assert!(
            !svg.contains(">budget<"),
            "no legend entry for a line not drawn"
        );
    }
}
