//===- State.cpp - a GDN state tensor in its stored element type ----------===//
#include "ops/gdn/State.h"

#include <cstring>
#include <limits>

using namespace kiln;
using namespace kiln::gdn;

bool StateTensor::forConfig(const RunConfig &cfg, StateTensor &out, std::string &error) {
  auto it = cfg.types.find("STATE");
  std::string name = it == cfg.types.end() ? "f32" : it->second;
  if (name == "f32")
    out.type = DType::F32;
  else if (name == "bf16")
    out.type = DType::BF16;
  else if (name == "f16")
    out.type = DType::F16;
  else if (name == "f8e4m3")
    out.type = DType::F8E4M3;
  else {
    error = "the GDN state is f32, bf16, f16 or f8e4m3, not " + name;
    return false;
  }
  return true;
}

void StateTensor::resize(int64_t count) {
  bytes.assign(count * elementBytes(), 0);
  for (int64_t i = 0; i < count; ++i)
    set(i, std::numeric_limits<double>::quiet_NaN());
}

void StateTensor::fillNormal(std::mt19937_64 &rng, int64_t begin, int64_t end) {
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t i = begin; i < end; ++i)
    set(i, normal(rng));
}

double StateTensor::get(int64_t i) const { return elementAt(bytes.data(), type, i); }

void StateTensor::set(int64_t i, double x) { setElement(bytes.data(), type, i, x); }

double StateTensor::round(double x) const {
  uint64_t one; // an element of any stored type
  setElement(&one, type, 0, x);
  return elementAt(&one, type, 0);
}

std::vector<double> StateTensor::values(int64_t begin, int64_t end) const {
  std::vector<double> out;
  out.reserve(end - begin);
  for (int64_t i = begin; i < end; ++i)
    out.push_back(get(i));
  return out;
}

CheckResult StateTensor::untouchedRows(const std::string &what, const StateTensor &before,
                                       int64_t rowElements,
                                       const std::vector<bool> &written) const {
  CheckResult check;
  check.what = what;
  check.tolerance = 0.5; // a count of changed rows: must be 0
  const size_t rowBytes = rowElements * elementBytes();
  for (size_t r = 0; r < written.size(); ++r)
    if (!written[r] &&
        std::memcmp(bytes.data() + r * rowBytes, before.bytes.data() + r * rowBytes, rowBytes))
      check.relError += 1;
  return check;
}

double StateTensor::tolerance(double f32Tolerance) const {
  // One unit roundoff of the stored type: 2^-8 for bf16's 8-bit
  // significand, 2^-11 for f16's 11 bits, 2^-4 for f8e4m3's 4.
  switch (type) {
  case DType::F8E4M3:
    return f32Tolerance + 0x1p-4;
  case DType::BF16:
    return f32Tolerance + 0x1p-8;
  case DType::F16:
    return f32Tolerance + 0x1p-11;
  default:
    return f32Tolerance;
  }
}
