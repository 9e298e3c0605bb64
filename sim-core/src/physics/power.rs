//! Power: what a GPU draws idle and while it runs a forward pass, and so the
//! energy a run uses.
//!
//! A GPU that is up but runs nothing draws its idle power. While it runs a
//! pass it draws more, by a share of the span between idle and its board
//! power (TDP or TBP, the most it is allowed to draw):
//!
//! `P = idle + (board − idle) · (ACTIVE + COMPUTE · u_flops + MEMORY · u_bytes)`
//!
//! where `u_flops` and `u_bytes` are the pass's FLOP/s and HBM bytes/s over
//! the GPU's peaks. `ACTIVE` is what clocked-up SMs, caches and links draw
//! whatever the kernels do; the other two terms are the energy of each
//! FLOP and each byte moved, in units of the GPU's own power span, so one
//! set of coefficients serves GPUs of every size.
//!
//! The share is held at 1 (board power: the GPU's power limit throttles
//! its clocks there), so each pass is weighed on its own as it runs; a run
//! keeps the sum of its passes' times × shares ([`Power::energy_j`]).

/// A GPU's power figures, watts per GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Power {
    /// Drawn while the GPU is up and runs nothing.
    pub idle_w: f64,
    /// The board power limit (TDP/TBP): the most it draws.
    pub board_w: f64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// The shares of the span between idle and board power a pass draws:
/// whatever it runs (`active`), per unit of FLOP/s utilisation (`compute`)
/// and per unit of HBM bandwidth utilisation (`memory`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerCoefficients {
    /// Drawn by any pass, as a share of the span.
    pub active: f64,
    /// Per unit of FLOP/s over peak.
    pub compute: f64,
    /// Per unit of HBM bytes/s over peak.
    pub memory: f64,
}

/// The coefficients, fitted by least squares (`tlab calibrate --power` on
/// the InferenceX file) to the 20 distinct co-located MI355X runs with
/// measured power, at the work each run measured: mean absolute error
/// 7.6 % on their watts (docs/calibration-public.md, "Energy"). One GPU
/// kind and two engines: on other GPUs these are an estimate.
pub const POWER_COEFFICIENTS: PowerCoefficients = PowerCoefficients {
    active: 0.284,
    compute: 5.962,
    memory: 0.082,
};

impl Power {
    /// Watts per GPU while a pass runs at `flops_share` of the peak FLOP/s
    /// and `bytes_share` of the peak bandwidth.
    pub fn pass_watts(&self, c: &PowerCoefficients, flops_share: f64, bytes_share: f64) -> f64 {
        self.idle_w + (self.board_w - self.idle_w) * c.share(flops_share, bytes_share)
    }

    /// Joules a pool's GPUs use: `up_gpu_s` GPU-seconds up at idle power,
    /// plus `span_gpu_s`, its GPU-seconds of passes each weighted by its
    /// [`PowerCoefficients::share`], at the span above idle.
    pub fn energy_j(&self, up_gpu_s: f64, span_gpu_s: f64) -> f64 {
        self.idle_w * up_gpu_s + (self.board_w - self.idle_w) * span_gpu_s
    }
}

impl PowerCoefficients {
    /// The share of the span between idle and board power a pass draws at
    /// `flops_share` of the peak FLOP/s and `bytes_share` of the peak
    /// bandwidth: 0..=1 (a pass past the board power is held at it, as the
    /// GPU's power limit holds it).
    pub fn share(&self, flops_share: f64, bytes_share: f64) -> f64 {
        let s = self.active + self.compute * flops_share + self.memory * bytes_share;
        if s.is_finite() {
            s.clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: Power = Power {
        idle_w: 70.0,
        board_w: 700.0,
        source: "test",
    };
    const C: PowerCoefficients = PowerCoefficients {
        active: 0.3,
        compute: 0.2,
        memory: 0.5,
    };

    #[test]
    fn a_pass_draws_between_idle_and_board_power() {
        assert_eq!(H100.pass_watts(&C, 0.0, 0.0), 70.0 + 630.0 * 0.3);
        assert_eq!(H100.pass_watts(&C, 1.0, 1.0), 700.0);
        assert_eq!(H100.pass_watts(&C, 5.0, 5.0), 700.0, "capped at the board");
        assert!(H100.pass_watts(&C, 0.1, 0.8) > H100.pass_watts(&C, 0.1, 0.2));
    }

    #[test]
    fn a_runs_energy_is_idle_while_up_and_the_span_while_passes_run() {
        // Two GPUs up 10 s; passes 4 s of them at 25 % of peak FLOP/s and
        // 50 % of peak bandwidth.
        let span_gpu_s = 8.0 * C.share(0.25, 0.5);
        let by_pass = 8.0 * H100.pass_watts(&C, 0.25, 0.5) + 12.0 * 70.0;
        assert!((H100.energy_j(20.0, span_gpu_s) - by_pass).abs() < 1e-6);
        assert_eq!(H100.energy_j(20.0, 0.0), 20.0 * 70.0);
        assert_eq!(C.share(f64::NAN, 0.0), 1.0);
    }
}
