//===- State.h - a GDN state tensor in its stored element type --*- C++ -*-===//
//
// The recurrent state may be stored in f32, bf16, f16 or f8e4m3 (the op's STATE
// dtype param). It is read, widened to f32, updated and rounded once when
// stored, so the golden applies the same single rounding to the state it
// expects, and the tolerance adds one unit of that rounding to f32's.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_GDN_STATE_H
#define KILN_OPS_GDN_STATE_H

#include "ops/Harness.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::gdn {

class StateTensor {
public:
  /// The element type the op was compiled with (`cfg.types["STATE"]`, f32
  /// when the op declares none). False with `error` set for other types.
  static bool forConfig(const RunConfig &cfg, StateTensor &out, std::string &error);

  /// `count` elements, every one NaN (poison) until set.
  void resize(int64_t count);
  /// Fills [begin, end) from a standard normal, rounded to the stored type.
  void fillNormal(std::mt19937_64 &rng, int64_t begin, int64_t end);
  double get(int64_t i) const;
  void set(int64_t i, double x); // rounds to the stored type
  /// x rounded to the stored type (f32 rounding for an f32 state).
  double round(double x) const;
  /// Elements [begin, end) as doubles.
  std::vector<double> values(int64_t begin, int64_t end) const;

  void *data() { return bytes.data(); }
  const void *data() const { return bytes.data(); }
  DType dtype() const { return type; }
  size_t elementBytes() const { return dtypeBytes(type); }
  /// The relative error allowed for the state: f32's (`f32Tolerance`) plus
  /// one unit of the stored type's rounding.
  double tolerance(double f32Tolerance) const;
  /// A check named `what` counting the rows of `rowElements` elements that
  /// nothing wrote (`written[r]` false) yet differ from `before` in a byte:
  /// it passes only with none.
  CheckResult untouchedRows(const std::string &what, const StateTensor &before, int64_t rowElements,
                            const std::vector<bool> &written) const;

private:
  DType type = DType::F32;
  std::vector<uint8_t> bytes;
};

} // namespace kiln::gdn

#endif
