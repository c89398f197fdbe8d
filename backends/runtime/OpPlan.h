//===- OpPlan.h - run an op made of several kernel launches -----*- C++ -*-===//
//
// A `tile.op` as the host sees it: the op's signature, the scratch tensors it
// allocates (shaped by the op's runtime dims) and the kernels it launches in
// order, each argument naming an op parameter or a scratch tensor. The CPU
// runner and the GPU runtime both drive it through runOpPlan, so an op runs
// the same way on either. Plain C++, like the rest of backends/runtime.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_RUNTIME_OPPLAN_H
#define KILN_BACKENDS_RUNTIME_OPPLAN_H

#include "backends/runtime/Json.h"
#include "backends/runtime/Signature.h"

#include <functional>

namespace kiln {

struct OpPlan {
  struct Launch {
    std::string kernel;
    /// Per kernel parameter: an op parameter (index >= 0) or scratch tensor
    /// `-1 - index`.
    std::vector<int64_t> args;
    /// Launched beside the launch before it (a second, high-priority
    /// stream), not after it; it waits on flags for what it reads. A runner
    /// may also launch it after: the flags are set by then.
    bool overlap = false;
    /// Launched beside: the dynamic shared memory each CTA asks for, the
    /// SM's whole (a schedule's `exclusive`), so that no CTA of the launch
    /// before it shares an SM with one of this launch's. 0: its own.
    int64_t besideSharedBytes = 0;
    /// Started early (a schedule's `early_start`): launched as a
    /// programmatic dependent of the launch before it, whose completion it
    /// awaits before it touches that launch's results. A runner does so only
    /// where the launch before it in the same call ran (a grid of no CTAs is
    /// skipped): otherwise it launches it as any other.
    bool early = false;
    /// Whether a runner launches it beside, on a device of `sms` SMs, as
    /// `ctas` CTAs: while they leave an SM free (resident CTAs that wait
    /// must not keep the ones that set their flags from starting), and take
    /// at most half the SMs where each takes one to itself (the launch
    /// before it would crawl on the few left). The Python package's
    /// `kiln.binding.fits_beside` is its twin.
    bool runsBeside(int64_t ctas, int64_t sms) const {
      return overlap && ctas < sms && (!besideSharedBytes || 2 * ctas <= sms);
    }
  };
  /// `dim name = align(of, multiple)`: `of` rounded up to a multiple.
  struct AlignedDim {
    std::string name, of;
    int64_t multiple = 1;
  };
  KernelSignature signature; // the op's parameters
  std::vector<AlignedDim> alignedDims;
  std::vector<ParamInfo> scratch; // access "scratch"; dims are the op's or aligned ones
  std::vector<Launch> launches;

  bool empty() const { return launches.empty(); }
  json::Value toJson() const;
  static bool fromJson(const json::Value &v, OpPlan &out, std::string &error);
};

/// Bytes of a scratch tensor for the op's bound dims.
size_t scratchBytes(const ParamInfo &scratch, const std::map<std::string, int64_t> &dims);

/// Checks `args` against the op's signature, binds the aligned dims, asks
/// `allocate` for every scratch tensor (its `data` filled in by the
/// callee), then calls `launch` with each step's index and arguments, in
/// order. Stops at the first failure with `error` set.
bool runOpPlan(
    const OpPlan &plan, const std::vector<ArgValue> &args,
    const std::function<bool(const ParamInfo &, size_t bytes, ArgValue &, std::string &)> &allocate,
    const std::function<bool(size_t step, const std::vector<ArgValue> &, std::string &)> &launch,
    std::string &error);

/// Checks that manifest field `what` is present with the given kind; sets
/// `error` ("manifest field 'what' is missing or has the wrong type").
bool manifestField(const json::Value *x, json::Value::Kind kind, const std::string &what,
                   std::string &error);

/// A signature as JSON (dims, params) and back; shared with manifests.
void signatureToJson(const KernelSignature &sig, json::Value &into);
bool signatureFromJson(const json::Value &v, KernelSignature &sig, std::string &error);

} // namespace kiln

#endif
