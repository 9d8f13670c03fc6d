// Fitting the training calibration's named parameters to measured step times, and the
// leave-one-source-out check that the fit generalises.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "training/calibration.hpp"
#include "training/step_model.hpp"

namespace fmsim::training {

/// One measured run: the job, its measured step time, and the source it was published in.
struct Measurement {
  TrainingJob job;
  double measured_step_time_s = 0.0;
  std::string source;
  collectives::CommCostFn comm;
};

/// A named, bounded calibration parameter (e.g. "hopper.gemm_efficiency_fp8").
struct FitParameter {
  std::string name;
  double* value;
  double min;
  double max;
  std::vector<double*> linked = {};                     ///< set to `value` too (Blackwell Ultra follows Blackwell)
  std::vector<std::pair<double*, double>> scaled = {};  ///< set to `value` x ratio (attention backward)
  double prior = 0.0;         ///< the benchmark prior (Calibration::priors), or the starting value without one
  bool microseconds = false;  ///< an overhead in us (moved additively), not an efficiency (moved by a factor)
  double spread = 0.0;        ///< 1-sigma of ln(value / prior) (Calibration::prior_spreads or kDefaultPriorSpread)
};

/// Spread of a prior that states none: +-30% (1-sigma in ln units), about how far kernel
/// benchmarks of one operation spread across shapes and library versions.
inline constexpr double kDefaultPriorSpread = 0.30;

/// The parameters a fit may move: per architecture the GEMM efficiencies (BF16, FP8, FP4) and the
/// attention forward efficiency of the reference kernel and, where a stack runs FlashAttention-2
/// there, of FA2 (backward keeps its prior ratio to forward; long-sequence rows identify it), per non-reference stack
/// the compute efficiency, and per stack the per-layer and MoE dispatch overheads. Blackwell Ultra shares Blackwell's
/// tensor cores and software, so it follows Blackwell's values (its sustained_rate_factor, from its SM count and power
/// limit, is not fitted). Only parameters used by `measurements` are returned; a
/// fit from the priors puts the others back to their priors too.
std::vector<FitParameter> fit_parameters(Calibration& calibration, const std::vector<Measurement>& measurements);

/// Robust loss: mean over rows of |ln(predicted / measured)| (L1 in log space: a row's pull does
/// not grow with its error, so rows the model cannot explain do not dominate).
double fit_loss(const Calibration& calibration, const std::vector<Measurement>& measurements);

/// Default weight of the priors: 0.0005 per (ln(value/prior)/spread)^2, about b / 2N of a
/// maximum-a-posteriori fit with Laplace errors of scale b ~ 0.1 (the typical |ln ratio|) over the
/// N ~ 100-200 measured rows of a training.csv.
inline constexpr double kDefaultAnchor = 0.0005;

/// How a fit starts and how strongly it holds to the priors.
struct FitOptions {
  int rounds = 6;
  /// Put every value that has a cited prior back to it before fitting (the default: a fit, and
  /// each leave-one-source-out refit, then never keeps values fitted to other data, including
  /// values no remaining measurement exercises); false starts from the given values.
  bool from_priors = true;
  /// Weight of the prior term added to fit_loss: anchor x sum over parameters of
  /// (ln(value / prior) / spread)^2 (overheads: ln((v + 50 us) / (prior + 50 us))). A parameter
  /// the data does not identify (a held-out source's only architecture, two parameters that trade
  /// off) stays near its benchmark, within its stated spread, instead of drifting.
  double anchor = kDefaultAnchor;
};

struct FitReport {
  double loss_before = 0.0;
  double loss_after = 0.0;
  int evaluations = 0;
};

/// Coordinate descent with shrinking multiplicative steps over `fit_parameters` on fit_loss plus
/// the prior term. Deterministic. loss_before/loss_after in the report are fit_loss alone.
FitReport fit_calibration(Calibration& calibration, const std::vector<Measurement>& measurements,
                          const FitOptions& options = {});

}  // namespace fmsim::training
