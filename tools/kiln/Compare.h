//===- Compare.h - kiln compare: schedules of one op side by side -*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_COMPARE_H
#define KILN_TOOLS_KILN_COMPARE_H

#include "dsl/schedule/Selection.h"
#include "tools/kiln/Driver.h"

namespace kiln {

struct CompareOptions {
  std::string tilePath;
  std::vector<std::string> schedules;
  std::map<std::string, lang::ExternalValue> constants;
  std::map<std::string, int64_t> dims; // shape of the numeric run and the estimate
  uint64_t seed = 1;
  bool json = false;
  /// A bench JSON (bench/prefill_bench.py --json): each schedule's measured
  /// times, or its `--retarget` twin's, are shown beside its estimate.
  std::string measuredPath;
  /// Also build each GPU schedule through CUDA C++ with nvcc and show its
  /// kernels' registers, shared memory and spills beside the PTX build's.
  bool cuda = false;
  /// A selection file's rules (`kiln compare SEL.yaml`): printed first, with
  /// the schedule `dims` pick and, with `measuredPath`, the one each
  /// measured shape picks beside the fastest measured there, on a GPU of
  /// `sms` multiprocessors.
  const Selection *selection = nullptr;
  int64_t sms = 132;
};

/// Prints, per schedule: resources (ptxas), the PTX instruction mix, a
/// roofline estimate, the largest output difference from the other
/// schedules on the CPU backend, and the GPU time where a GPU is present.
int compareSchedules(const CompareOptions &options);

} // namespace kiln

#endif
