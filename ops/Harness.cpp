//===- Harness.cpp - registry and comparisons -----------------------------===//
#include "ops/Harness.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace kiln;

static std::vector<OpHarness> &registry() {
  static std::vector<OpHarness> all;
  return all;
}

void kiln::registerHarness(OpHarness harness) { registry().push_back(std::move(harness)); }

void registerGdnDecodeHarness();  // ops/gdn/DecodeHarness.cpp
void registerGdnMtpHarness();     // ops/gdn/MtpHarness.cpp
void registerGdnPrefillHarness(); // ops/gdn/PrefillHarness.cpp

const OpHarness *kiln::findHarness(const std::string &kernel) {
  static bool once =
      (registerGdnDecodeHarness(), registerGdnMtpHarness(), registerGdnPrefillHarness(), true);
  (void)once;
  for (const OpHarness &h : registry())
    if (h.kernel == kernel)
      return &h;
  return nullptr;
}

bool OpHarness::completeConfig(RunConfig &cfg, const std::map<std::string, int64_t> &constants,
                               const std::map<std::string, std::string> &types,
                               bool roundedOperands, std::string &error,
                               const std::vector<std::string> &alsoTaken) const {
  for (auto &[name, v] : cfg.dims) {
    if (std::find(dims.begin(), dims.end(), name) != dims.end() ||
        std::find(alsoTaken.begin(), alsoTaken.end(), name) != alsoTaken.end())
      continue;
    std::string list;
    for (const std::string &d : dims)
      list += (list.empty() ? "" : ", ") + d;
    error =
        "--dims " + name + ": " + kernel + " takes no dim '" + name + "' (it takes " + list + ")";
    if (constants.count(name))
      error += "; " + name + " is a constant of its source: -D " + name + "=N";
    return false;
  }
  cfg.roundedOperands = roundedOperands;
  for (auto &[k, v] : constants)
    cfg.constants[k] = v;
  for (auto &[k, v] : types)
    cfg.types[k] = v;
  for (auto &[k, v] : defaultDims)
    cfg.dims.emplace(k, v);
  return true;
}

/// Splits "a,b,c" (an empty text is one empty part).
static std::vector<std::string> splitCommas(const std::string &text) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    parts.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos)
      return parts;
    pos = comma + 1;
  }
}

bool kiln::parseInteger(const std::string &text, int64_t &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && !*end && errno != ERANGE;
}

bool kiln::parseRunOption(int argc, char **argv, int &i, RunConfig &cfg, std::string &error) {
  std::string arg = argv[i], v;
  auto value = [&]() {
    if (i + 1 >= argc)
      return false;
    v = argv[++i];
    return true;
  };
  int64_t n;
  if (arg == "--dims") {
    if (!value())
      return error = "--dims needs NAME=N,...", true;
    for (const std::string &part : splitCommas(v)) {
      size_t eq = part.find('=');
      if (eq == std::string::npos || eq == 0 || !parseInteger(part.substr(eq + 1), n) || n <= 0)
        return error = "--dims takes NAME=POSITIVE_INTEGER pairs, got '" + part + "'", true;
      if (n > kLargestDim)
        return error = "--dims " + part + ": a dim must be below 2^31", true;
      if (!cfg.dims.emplace(part.substr(0, eq), n).second)
        return error = "--dims names " + part.substr(0, eq) + " twice", true;
    }
  } else if (arg == "--seed") {
    if (!value() || !parseInteger(v, n))
      return error = "--seed needs an integer", true;
    cfg.seed = n;
  } else if (arg == "--skip") {
    char *end = nullptr;
    if (!value() || (cfg.skipFraction = std::strtod(v.c_str(), &end), *end) ||
        cfg.skipFraction < 0 || cfg.skipFraction > 1)
      return error = "--skip needs a fraction in [0, 1]", true;
  } else if (arg == "--seqlens") {
    cfg.seqLens.clear();
    int64_t total = 0;
    if (!value())
      return error = "--seqlens takes non-negative lengths like 1,64,200,7", true;
    for (const std::string &part : splitCommas(v)) {
      if (!parseInteger(part, n) || n < 0)
        return error = "--seqlens takes non-negative lengths like 1,64,200,7", true;
      if (n > kLargestDim - total)
        return error = "--seqlens: the lengths must add up to less than 2^31 tokens", true;
      total += n;
      cfg.seqLens.push_back(n);
    }
  } else if (arg == "--no-initial-state") {
    cfg.initialState = false;
  } else if (arg == "--saturate-gates") {
    cfg.saturateGates = true;
  } else if (arg == "--slow-gates") {
    cfg.slowGates = true;
  } else {
    return false;
  }
  return true;
}

bool kiln::fitsHostMemory(double bytes, const std::string &what, std::string &error) {
  double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
  if (have <= 0 || bytes <= 0.9 * have)
    return true;
  char text[160];
  std::snprintf(text, sizeof text,
                "needs about %.1f GiB of host memory, more than this machine's %.1f GiB",
                bytes / (1 << 30), have / (1 << 30));
  error = what + " " + text;
  return false;
}

std::string kiln::describeDims(const std::map<std::string, int64_t> &dims) {
  std::string out;
  for (auto &[k, v] : dims)
    out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return out;
}

std::string kiln::describeShape(const RunConfig &cfg) {
  std::string out;
  for (const char *name : {"B", "T", "H", "HV"}) // T: multi-token decode's tokens a request
    if (cfg.dims.count(name))
      out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(cfg.dims.at(name));
  if (!cfg.seqLens.empty()) {
    out += " T=";
    for (size_t i = 0; i < cfg.seqLens.size(); ++i)
      out += (i ? "," : "") + std::to_string(cfg.seqLens[i]);
  }
  if (!cfg.initialState)
    out += " no-h0";
  return out;
}

bool kiln::printChecks(const std::vector<CheckResult> &checks) {
  bool ok = true;
  for (const CheckResult &c : checks) {
    std::printf("  %-16s rel_err %.3e  (tol %.0e)  %s\n", c.what.c_str(), c.relError, c.tolerance,
                c.nan    ? "FAIL (NaN/Inf)"
                : c.ok() ? "ok"
                         : "FAIL");
    ok &= c.ok();
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok;
}

CheckResult kiln::compare(const std::string &what, const std::vector<double> &got,
                          const std::vector<double> &ref, double tolerance) {
  CheckResult r;
  r.what = what;
  r.tolerance = tolerance;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]))
      r.nan = true;
    diff += (got[i] - ref[i]) * (got[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  r.relError = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  if (!std::isfinite(r.relError))
    r.nan = true;
  return r;
}

uint16_t kiln::toBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffff) > 0x7f800000)
    return 0x7fc0; // NaN
  u += 0x7fff + ((u >> 16) & 1);
  return u >> 16;
}

float kiln::fromBf16(uint16_t x) {
  uint32_t u = (uint32_t)x << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t kiln::toF16(float x) {
  _Float16 h = (_Float16)x;
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

uint8_t kiln::toF8e4m3(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  uint8_t sign = (u >> 24) & 0x80;
  uint32_t a = u & 0x7fffffff;
  if (a > 0x7f800000)
    return sign | 0x7f; // NaN
  if (a < 0x3c800000) { // below 2^-6: a subnormal code, |x| 2^9 rounded
    float f;
    std::memcpy(&f, &a, 4);
    return sign | (uint8_t)std::nearbyint(f * 0x1p9f); // the default rounding: to even
  }
  uint32_t code = ((a + 0x7ffff + ((a >> 20) & 1)) >> 20) - (120 << 3);
  return sign | (uint8_t)std::min<uint32_t>(code, 0x7e);
}

float kiln::fromF8e4m3(uint8_t x) {
  float sign = x & 0x80 ? -1.0f : 1.0f;
  int e = (x >> 3) & 15, m = x & 7;
  if (e == 15 && m == 7)
    return std::nanf("");
  if (e == 0)
    return sign * std::ldexp((float)m, -9);
  return sign * std::ldexp(1.0f + m / 8.0f, e - 7);
}

float kiln::fromF16(uint16_t x) {
  _Float16 h;
  std::memcpy(&h, &x, 2);
  return (float)h;
}

double kiln::elementAt(const void *data, DType t, int64_t i) {
  auto bytes = static_cast<const uint8_t *>(data);
  switch (t) {
  case DType::F32:
    return reinterpret_cast<const float *>(bytes)[i];
  case DType::F64:
    return reinterpret_cast<const double *>(bytes)[i];
  case DType::BF16:
    return fromBf16(reinterpret_cast<const uint16_t *>(bytes)[i]);
  case DType::F16:
    return fromF16(reinterpret_cast<const uint16_t *>(bytes)[i]);
  case DType::I8:
    return reinterpret_cast<const int8_t *>(bytes)[i];
  case DType::I32:
    return reinterpret_cast<const int32_t *>(bytes)[i];
  case DType::I64:
    return (double)reinterpret_cast<const int64_t *>(bytes)[i];
  case DType::F8E4M3:
    return fromF8e4m3(bytes[i]);
  }
  return 0;
}

void kiln::setElement(void *data, DType t, int64_t i, double v) {
  auto bytes = static_cast<uint8_t *>(data);
  switch (t) {
  case DType::F32:
    reinterpret_cast<float *>(bytes)[i] = (float)v;
    break;
  case DType::F64:
    reinterpret_cast<double *>(bytes)[i] = v;
    break;
  case DType::BF16:
    reinterpret_cast<uint16_t *>(bytes)[i] = toBf16((float)v);
    break;
  case DType::F16:
    reinterpret_cast<uint16_t *>(bytes)[i] = toF16((float)v);
    break;
  case DType::I8:
    reinterpret_cast<int8_t *>(bytes)[i] = (int8_t)v;
    break;
  case DType::I32:
    reinterpret_cast<int32_t *>(bytes)[i] = (int32_t)v;
    break;
  case DType::I64:
    reinterpret_cast<int64_t *>(bytes)[i] = (int64_t)v;
    break;
  case DType::F8E4M3:
    bytes[i] = toF8e4m3((float)v);
    break;
  }
}
