//===- Harness.h - random inputs + golden check for a bundled op -*- C++ -*-===//
//
// Each bundled op registers how to make fresh random inputs for given dims,
// how to call its float64 golden reference, and how to compare. `kiln run`,
// `kiln check` and the numerics tests all go through this.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_HARNESS_H
#define KILN_OPS_HARNESS_H

#include "backends/runtime/Signature.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln {

struct RunConfig {
  std::map<std::string, int64_t> dims;      // runtime dims, e.g. B, H, HV
  std::map<std::string, int64_t> constants; // the op's consts as compiled (K, V, ...)
  std::map<std::string, std::string> types; // its dtype consts and params (STATE: "bf16")
  uint64_t seed = 1;
  bool saturateGates = false;   // |a|, |b| ~ 30
  bool slowGates = false;       // a ~ N(-8, 1): heads that remember thousands of tokens
  double skipFraction = 0.0;    // share of requests with a negative slot index
  std::vector<int64_t> seqLens; // prefill: lengths of the packed sequences (default per op)
  bool initialState = true;     // prefill: start from a random state, or from zeros
  /// The kernel's matrix products round their operands below f32 (tensor
  /// cores' tf32 / bf16, or 16-bit operands of the op's own): the spec's
  /// looser tolerance for float32 state applies.
  bool roundedOperands = false;
};

struct CheckResult {
  std::string what; // e.g. "o", "state"
  double relError = 0;
  double tolerance = 0;
  bool nan = false; // NaN or Inf anywhere in the output
  /// A tolerance of 0 (integer outputs) asks for an exact match.
  bool ok() const { return !nan && (relError < tolerance || (tolerance == 0 && relError == 0)); }
};

using Launcher = std::function<bool(const std::vector<ArgValue> &, std::string &)>;

struct OpHarness {
  std::string kernel;            // kernel name the harness drives
  std::vector<std::string> dims; // runtime dims it needs
  std::map<std::string, int64_t> defaultDims;
  /// The configurations `kiln check` runs every schedule of this op on.
  std::vector<RunConfig> checkConfigs;
  /// Makes inputs, launches, runs the golden reference, compares.
  std::function<bool(const RunConfig &, const Launcher &, std::vector<CheckResult> &,
                     std::string &)>
      run;

  /// Fills in what a caller's config leaves out: this op's default dims, the
  /// consts the kernel was compiled with (they override), and whether its
  /// matrix products round their operands (roundsMatrixOperands, or the
  /// manifest's `rounded_operands`). A dim the caller gave that the op does
  /// not take (--dims) is an error: `error` names it and the op's dims.
  /// `alsoTaken` names dims a caller uses besides the harness's (kiln
  /// compare's estimate reads the signature's T and N, which a run derives
  /// from --seqlens).
  [[nodiscard]] bool completeConfig(RunConfig &cfg, const std::map<std::string, int64_t> &constants,
                                    const std::map<std::string, std::string> &types,
                                    bool roundedOperands, std::string &error,
                                    const std::vector<std::string> &alsoTaken = {}) const;
};

const OpHarness *findHarness(const std::string &kernel);
/// Reads one of the run options `kiln run` and `kiln-gpu run` share
/// (--dims, --seed, --skip, --saturate-gates, --slow-gates, --seqlens, --no-initial-state)
/// at argv[i] into `cfg`, moving i onto its value. Returns false when
/// argv[i] is none of them; a bad value returns true with `error` set.
bool parseRunOption(int argc, char **argv, int &i, RunConfig &cfg, std::string &error);
/// A whole decimal integer of 64 bits (strtoll's clamp refused): the
/// command lines' numbers.
bool parseInteger(const std::string &text, int64_t &value);
/// A short description of a run's shape: "B=7 H=16 HV=32", "H=4 HV=8 T=1,64,7".
std::string describeShape(const RunConfig &cfg);
/// `dims` as `NAME=N` pairs in name order, space-separated.
std::string describeDims(const std::map<std::string, int64_t> &dims);
/// Whether about `bytes` of host memory (a run's tensors, their copies and
/// its reference's) fit in this machine's physical memory; if not, `error`
/// says how much `what` needs and how much there is. Runs check before they
/// allocate: a shape that cannot fit is an error naming it, not a failed
/// allocation or the kernel's out-of-memory killer half way through.
bool fitsHostMemory(double bytes, const std::string &what, std::string &error);
void registerHarness(OpHarness harness);

/// ||x - ref|| / ||ref|| over all elements, with NaN / Inf detection.
CheckResult compare(const std::string &what, const std::vector<double> &got,
                    const std::vector<double> &ref, double tolerance);

/// Prints one line per check and PASS / FAIL; returns whether all passed.
bool printChecks(const std::vector<CheckResult> &checks);

/// bf16 as its 16 bits: round to nearest even, and back.
uint16_t toBf16(float x);
float fromBf16(uint16_t x);
/// f16 as its 16 bits: round to nearest even, and back.
uint16_t toF16(float x);
float fromF16(uint16_t x);
/// f8e4m3 (e4m3fn) as its byte: round to nearest even, magnitudes past 448
/// to +-448, NaN to NaN (PTX's cvt.rn.satfinite), and back (exact).
uint8_t toF8e4m3(float x);
float fromF8e4m3(uint8_t x);

/// Element `i` of `data` holding elements of `t`, as a double (every float
/// type widened exactly).
double elementAt(const void *data, DType t, int64_t i);
/// Stores `v` as element `i` of `t` (floats round to nearest even, through
/// f32 for the narrow ones; integers truncate).
void setElement(void *data, DType t, int64_t i, double v);

} // namespace kiln

#endif
