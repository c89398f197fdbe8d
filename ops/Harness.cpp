//===- Harness.cpp - registry and comparisons -----------------------------===//
#include "ops/Harness.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace kiln;

static std::vector<OpHarness> &registry() {
  static std::vector<OpHarness> all;
  return all;
}

void kiln::registerHarness(OpHarness harness) { registry().push_back(std::move(harness)); }

void registerGdnDecodeHarness();  // ops/gdn/DecodeHarness.cpp
void registerGdnPrefillHarness(); // ops/gdn/PrefillHarness.cpp

const OpHarness *kiln::findHarness(const std::string &kernel) {
  static bool once = (registerGdnDecodeHarness(), registerGdnPrefillHarness(), true);
  (void)once;
  for (const OpHarness &h : registry())
    if (h.kernel == kernel)
      return &h;
  return nullptr;
}

void OpHarness::completeConfig(RunConfig &cfg,
                               const std::map<std::string, int64_t> &constants) const {
  for (auto &[k, v] : constants)
    cfg.constants[k] = v;
  for (auto &[k, v] : defaultDims)
    cfg.dims.emplace(k, v);
}

bool kiln::parseSeqLens(const std::string &text, std::vector<int64_t> &lens) {
  lens.clear();
  size_t pos = 0;
  while (true) {
    size_t comma = text.find(',', pos);
    std::string part =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char *end = nullptr;
    long long n = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || n < 0)
      return false;
    lens.push_back(n);
    if (comma == std::string::npos)
      return true;
    pos = comma + 1;
  }
}

std::string kiln::describeShape(const RunConfig &cfg) {
  std::string out;
  for (const char *name : {"B", "H", "HV"})
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
