//===- float8_unit.cpp - f8e4m3 conversions on the host and the CPU JIT ---===//
//
// The host's conversion (golden data, .npy values, the harnesses) and the
// CPU backend's (expand-f8e4m3) must both round as PTX's cvt.rn.satfinite:
// every code round-trips, midpoints go to the even code, magnitudes past
// 448 saturate, NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/CpuKernel.h"
#include "tools/kiln/Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

using namespace kiln;

/// Inputs that exercise every rounding case: each code's value, the
/// midpoints between neighbours and a hair either side, values past the
/// largest, tiny ones, zeros and NaN.
static std::vector<float> float8Probes() {
  std::vector<float> xs;
  for (int c = 0; c < 0x7e; ++c) {
    float lo = fromF8e4m3(c), hi = fromF8e4m3(c + 1), mid = (lo + hi) / 2;
    for (float x : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)})
      xs.insert(xs.end(), {x, -x});
  }
  for (float x : {448.0f, 463.9f, 464.0f, 480.0f, 1e4f, 1e30f, INFINITY, 1e-30f, 1e-3f, 0.0f})
    xs.insert(xs.end(), {x, -x});
  xs.push_back(NAN);
  return xs;
}

TEST_CASE("f8e4m3 on the host rounds as cvt.rn.satfinite", "[float8]") {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) {
      CHECK(std::isnan(fromF8e4m3(c)));
      continue;
    }
    INFO("code " << c);
    CHECK(toF8e4m3(fromF8e4m3(c)) == c); // every value round-trips, -0 included
  }
  CHECK(fromF8e4m3(0x7e) == 448.0f);
  CHECK(fromF8e4m3(0x01) == std::ldexp(1.0f, -9)); // the smallest subnormal
  CHECK(fromF8e4m3(0x08) == std::ldexp(1.0f, -6)); // the smallest normal
  CHECK(fromF8e4m3(0xb8) == -1.0f);
  for (int c = 0; c < 0x7e; ++c) {
    INFO("between codes " << c << " and " << c + 1);
    float lo = fromF8e4m3(c), hi = fromF8e4m3(c + 1), mid = (lo + hi) / 2;
    CHECK(toF8e4m3(mid) == (c % 2 ? c + 1 : c)); // ties to even
    CHECK(toF8e4m3(std::nextafter(mid, 0.0f)) == c);
    CHECK(toF8e4m3(std::nextafter(mid, 1e9f)) == c + 1);
  }
  CHECK(toF8e4m3(464.0f) == 0x7e); // would round to 480: saturates
  CHECK(toF8e4m3(1e30f) == 0x7e);
  CHECK(toF8e4m3(-INFINITY) == 0xfe);
  CHECK(toF8e4m3(NAN) == 0x7f);
  CHECK(toF8e4m3(1e-30f) == 0);
}

TEST_CASE("f8e4m3 casts on the CPU backend match the host's", "[float8]") {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(true, dir);
  llvm::sys::path::append(dir, "kiln-float8-unit");
  llvm::sys::fs::create_directories(dir);
  std::string tile = (dir + "/cast.tile").str(), yaml = (dir + "/cast_cpu.yaml").str();
  std::ofstream(tile) << "kernel cast8(x: in f32[N], y: out f8e4m3[N], z: out f32[N])\n"
                         "  grid (i: cdiv(N, 64))\n{\n"
                         "  let t = load(x[i * 64 +: 64]) as f8e4m3;\n"
                         "  store(y[i * 64 +: 64], t);\n"
                         "  store(z[i * 64 +: 64], t as f32);\n}\n";
  std::ofstream(yaml) << "target: cpu\nop: cast8\ngrid: [i]\n";
  auto ctx = makeContext();
  Compiled c;
  std::string errors, error;
  llvm::raw_string_ostream os(errors);
  REQUIRE(compileOp(*ctx, tile, yaml, {}, c, os));
  auto kernel = CpuKernel::compile(*c.module, error);
  REQUIRE(kernel);
  std::vector<float> xs = float8Probes(), zs(xs.size());
  std::vector<uint8_t> ys(xs.size());
  int64_t n = xs.size();
  REQUIRE(kernel->launch({ArgValue::tensor(xs.data(), {n}, DType::F32),
                          ArgValue::tensor(ys.data(), {n}, DType::F8E4M3),
                          ArgValue::tensor(zs.data(), {n}, DType::F32)},
                         error));
  for (int64_t i = 0; i < n; ++i) {
    INFO("x = " << xs[i]);
    CHECK((int)ys[i] == (int)toF8e4m3(xs[i]));
    float want = fromF8e4m3(toF8e4m3(xs[i]));
    CHECK((std::isnan(want) ? std::isnan(zs[i]) : std::memcmp(&zs[i], &want, 4) == 0));
  }
}
