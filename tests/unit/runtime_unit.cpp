//===- runtime_unit.cpp - manifests, grid expressions, the GPU launcher ---===//
#include "backends/runtime/GpuLauncher.h"
#include "tools/kiln/Driver.h"

#include <catch2/catch.hpp>

using namespace kiln;

TEST_CASE("JSON round-trips and reports positions", "[runtime]") {
  json::Value v;
  std::string error;
  REQUIRE(json::parse(R"({"a": [1, "B", ["div", "V", 32]], "b": {"c": true}})", v, error));
  CHECK(json::print(v) == "{\n  \"a\": [\n    1,\n    \"B\",\n    [\"div\", \"V\", 32]\n  ],\n"
                          "  \"b\": {\n    \"c\": true\n  }\n}\n");
  json::Value again;
  REQUIRE(json::parse(json::print(v), again, error));
  CHECK(json::print(again) == json::print(v));
  CHECK_FALSE(json::parse("{\"a\": [1,\n 2 x]}", v, error));
  CHECK(error == "line 2, column 4: expected ',' or ']'");
}

TEST_CASE("a selection manifest names each rule's op", "[runtime]") {
  json::Value v;
  std::string error;
  REQUIRE(json::parse(R"({"op": "a", "target": "sm_90a", "source": "x.tile", "rules": [
    {"schedule": "s1", "manifest": "s1.json", "op": "a",
     "when": [{"text": "N == 1", "rpn": ["N", "1", "=="]}]},
    {"schedule": "s2", "manifest": "s2.json", "op": "b", "when": []}]})",
                      v, error));
  SelectionManifest s;
  REQUIRE(SelectionManifest::fromJson(v, s, error));
  REQUIRE(s.rules.size() == 2);
  CHECK(s.rules[0].op == "a");
  CHECK(s.rules[1].op == "b");
  size_t rule = 0;
  REQUIRE(chooseSelectionRule(s, {{"N", 2}}, 132, rule, error));
  CHECK(s.rules[rule].op == "b");
  // It writes what it read, each rule's op included.
  CHECK(json::print(s.toJson()) == json::print(v));
  // A rule without one is the selection's op; one that is no string is an error.
  REQUIRE(json::parse(R"({"op": "a", "target": "t", "source": "x", "rules": [
    {"schedule": "s1", "manifest": "s1.json", "when": []}]})",
                      v, error));
  REQUIRE(SelectionManifest::fromJson(v, s, error));
  CHECK(s.rules[0].op == "a");
  REQUIRE(json::parse(R"({"op": "a", "target": "t", "source": "x", "rules": [
    {"schedule": "s1", "manifest": "s1.json", "op": 3, "when": []}]})",
                      v, error));
  CHECK_FALSE(SelectionManifest::fromJson(v, s, error));
  CHECK(error == "rule 1 needs a string 'op'");
}

TEST_CASE("selection conditions refuse what does not fit in 64 bits", "[runtime]") {
  // As python/kiln/selection.py does (its integers never wrap): a product
  // of large dims is an error, never a wrapped value that picks a rule.
  int64_t out = 0;
  std::string error;
  REQUIRE(evalSelectionCondition({"M", "N", "*", "1", ">="}, {{"M", 1 << 20}, {"N", 1 << 20}}, 132,
                                 out, error));
  CHECK(out == 1);
  CHECK_FALSE(evalSelectionCondition({"M", "N", "*", "N", "*", "1", ">="},
                                     {{"M", int64_t(1) << 40}, {"N", int64_t(1) << 30}}, 132, out,
                                     error));
  CHECK(error == "1099511627776 * 1073741824 does not fit in 64 bits");
  CHECK_FALSE(evalSelectionCondition({"9223372036854775808", "1", ">="}, {}, 132, out, error));
  CHECK(error == "the number 9223372036854775808 does not fit in 64 bits");
  CHECK_FALSE(evalSelectionCondition({"0", "9223372036854775807", "-", "1", "-", "1", "-"}, {}, 132,
                                     out, error));
  CHECK(error == "-9223372036854775808 - 1 does not fit in 64 bits");
  // A name neither the dims nor `sms` give: the error says so, and the
  // caller learns which (kiln compare asks for it with --dims); an overflow
  // names none.
  std::string unknown;
  CHECK_FALSE(
      evalSelectionCondition({"M", "K", "*", "1", ">="}, {{"M", 4}}, 132, out, error, &unknown));
  CHECK(error == "unknown name 'K'");
  CHECK(unknown == "K");
  unknown.clear();
  CHECK_FALSE(evalSelectionCondition({"M", "M", "*", "M", "*", "1", ">="},
                                     {{"M", int64_t(1) << 30}}, 132, out, error, &unknown));
  CHECK(unknown.empty());
}

TEST_CASE("grid expressions evaluate over runtime dims", "[runtime]") {
  json::Value e;
  std::string error;
  REQUIRE(json::parse(R"(["mul", ["ceildiv", "B", 3], ["sub", "HV", 1]])", e, error));
  int64_t out = 0;
  REQUIRE(evalGridExpr(e, {{"B", 7}, {"HV", 5}}, out, error));
  CHECK(out == 3 * 4);
  CHECK_FALSE(evalGridExpr(e, {{"B", 7}}, out, error));
  CHECK(error == "grid uses dim 'HV' that has no value");
  // minimum / maximum of dims (prefill's cut batches: gdn_prefill_split_cp)
  REQUIRE(json::parse(R"(["mul", "N", ["min", ["max", ["sub", "A", "B"], 0], 7]])", e, error));
  REQUIRE(evalGridExpr(e, {{"N", 2}, {"A", 3}, {"B", 5}}, out, error));
  CHECK(out == 0);
  REQUIRE(evalGridExpr(e, {{"N", 2}, {"A", 30}, {"B", 5}}, out, error));
  CHECK(out == 14);
  // A product of large dims that does not fit in 64 bits is an error, never
  // a wrapped extent (python/kiln/binding.py's eval_expr says the same).
  REQUIRE(json::parse(R"(["mul", ["mul", "T", "HV"], ["mul", "T", "HV"]])", e, error));
  CHECK_FALSE(evalGridExpr(e, {{"T", 2147483647}, {"HV", 64}}, out, error));
  CHECK(error == "grid expression (T * HV) * (T * HV) does not fit in 64 bits at 137438953408, "
                 "137438953408");
}

TEST_CASE("GPU kernels take dims below 2^31 only", "[runtime]") {
  std::string error;
  CHECK(dimsFitGpuKernels({{"T", 2147483647}, {"HV", 32}}, error));
  CHECK_FALSE(dimsFitGpuKernels({{"HV", 32}, {"T", 2147483648}}, error));
  CHECK(error ==
        "dim T = 2147483648 exceeds 2^31 - 1, the largest a GPU kernel divides in 32 bits");
}

TEST_CASE("TMA copies need strides of 16-byte multiples", "[runtime]") {
  std::string error;
  CHECK(tmaStridesFit("a", {200, 304}, 2, error));
  CHECK(tmaStridesFit("a", {200, 3}, 16, error));
  CHECK_FALSE(tmaStridesFit("a", {200, 300}, 2, error));
  CHECK(error == "argument 'a' [200, 300] is copied by TMA, whose strides must be multiples of "
                 "16 bytes; its dim 0 steps 600 bytes");
  CHECK_FALSE(tmaStridesFit("q", {9, 3, 172}, 2, error));
  CHECK(error == "argument 'q' [9, 3, 172] is copied by TMA, whose strides must be multiples of "
                 "16 bytes; its dim 1 steps 344 bytes");
}

TEST_CASE("an invariant divisor's multiplier divides every 31-bit dividend exactly", "[runtime]") {
  std::vector<int64_t> divisors = {2147483647, 1073741824, 1073741825, 12345677, 65537};
  for (int64_t d = 1; d <= 4096; ++d)
    divisors.push_back(d);
  uint64_t seed = 1;
  for (int64_t d : divisors) {
    uint64_t arg = invariantDivisorArg(d);
    uint64_t m = arg & 0xffffffffu, s = arg >> 32;
    REQUIRE(s <= 62);
    // Around each multiple of d (where rounding would show), the ends, and
    // a pseudo-random spread.
    std::vector<int64_t> xs = {0, 1, d - 1, d, d + 1, 2147483646, 2147483647};
    for (int64_t k : {int64_t(2), int64_t(3), 2147483647 / d - 1, 2147483647 / d})
      for (int64_t x : {k * d - 1, k * d, k * d + 1})
        xs.push_back(x);
    for (int i = 0; i < 16; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      xs.push_back(int64_t(seed >> 33));
    }
    for (int64_t x : xs) {
      if (x < 0 || x > 2147483647)
        continue;
      uint64_t q = (uint64_t(x) * m) >> s;
      if (q != uint64_t(x / d))
        FAIL("x = " << x << ", d = " << d << ": " << q << " != " << x / d);
    }
  }
  json::Value e;
  std::string error;
  REQUIRE(json::parse(R"(["div", "HV", "H"])", e, error));
  std::vector<uint64_t> args;
  REQUIRE(invariantDivisorArgs({e}, {{"H", 4}, {"HV", 8}}, args, error));
  CHECK(args == std::vector<uint64_t>{invariantDivisorArg(2)});
  CHECK_FALSE(invariantDivisorArgs({e}, {{"H", 8}, {"HV", 4}}, args, error));
  CHECK(error == "the kernel divides by HV / H = 0, which must lie in [1, 2^31)");
}

/// GDN decode compiled with one bundled schedule, lowered for its GPU target.
struct DecodeBuild {
  std::unique_ptr<mlir::MLIRContext> ctx = makeContext();
  Compiled compiled;
  GpuBuild gpu;
};

static void buildDecode(const std::string &schedule, bool assemble, DecodeBuild &out) {
  std::string errText;
  llvm::raw_string_ostream errs(errText);
  std::string root = KILN_SOURCE_DIR;
  REQUIRE(compileOp(*out.ctx, root + "/ops/gdn/decode.tile",
                    root + "/ops/gdn/schedules/" + schedule, {}, out.compiled, errs));
  REQUIRE(buildForGpu(out.compiled, assemble, out.gpu, errs));
}

TEST_CASE("a compiled decode kernel's manifest describes its launch", "[runtime][ptx]") {
  if (findPtxas().empty()) {
    WARN("skipped: no ptxas on this machine");
    return;
  }
  DecodeBuild d;
  buildDecode("decode_sm_90a_bv8.yaml", /*assemble=*/true, d);
  const Compiled &c = d.compiled;
  const GpuBuild &build = d.gpu;
  const KernelManifest &m = build.manifest;
  CHECK(m.entry == "gdn_decode");
  CHECK(m.threads == 32);
  CHECK(build.report.spillStores == 0);
  CHECK(build.report.registers > 0);
  CHECK(build.report.registers <= 128); // the role's budget
  int64_t x = 0, y = 0, z = 0;
  std::string error;
  std::map<std::string, int64_t> dims = {{"B", 5}, {"H", 4}, {"HV", 8}, {"N", 9}};
  REQUIRE(evalGridExpr(m.grid[0], dims, x, error));
  REQUIRE(evalGridExpr(m.grid[1], dims, y, error));
  REQUIRE(evalGridExpr(m.grid[2], dims, z, error));
  CHECK(x == 128 / 8);
  CHECK(y == 8);
  CHECK(z == 5);
  // hv / (HV / H) divides by the launcher's multiplier of HV / H.
  REQUIRE(m.divisors.size() == 1);
  CHECK(json::print(m.divisors[0]) ==
        json::print(json::Value::arr(
            {json::Value::str("div"), json::Value::str("HV"), json::Value::str("H")})));
  KernelManifest back;
  REQUIRE(KernelManifest::fromJson(m.toJson(), back, error));
  CHECK(json::print(back.toJson()) == json::print(m.toJson()));

  // On a machine with a GPU, the kernel runs and matches the golden reference.
  auto kernel = GpuKernel::load(m, build.cubin, error);
  if (!kernel) {
    WARN("GPU run skipped: " << error);
    return;
  }
  const OpHarness *h = findHarness("gdn_decode");
  RunConfig cfg;
  cfg.dims = {{"B", 7}, {"H", 4}, {"HV", 8}};
  cfg.constants = c.constants;
  cfg.skipFraction = 0.3;
  std::vector<CheckResult> checks;
  Launcher launch = [&](const std::vector<ArgValue> &args, std::string &err) {
    return kernel->launch(args, err);
  };
  REQUIRE(h->run(cfg, launch, checks, error));
  for (auto &r : checks)
    CHECK(r.ok());
}

TEST_CASE("a TMA schedule's manifest carries its tensor maps and ring memory", "[runtime][ptx]") {
  DecodeBuild d;
  buildDecode("decode_sm_90a_tma_ring.yaml", /*assemble=*/false, d);
  const KernelManifest &m = d.gpu.manifest;
  CHECK(m.threads == 256);
  CHECK(m.persistent == 3);
  // Two 16 KB stages (32 rows x 128 f32), then a full and an empty mbarrier each.
  CHECK(m.dynamicSharedBytes == 2 * 32 * 128 * 4 + 2 * 2 * 8);
  REQUIRE(m.tensorMaps.size() == 1);
  CHECK(m.signature.params[m.tensorMaps[0].param].name == "state");
  CHECK(m.tensorMaps[0].box == std::vector<int64_t>{1, 1, 32, 128});
  KernelManifest back;
  std::string error;
  REQUIRE(KernelManifest::fromJson(m.toJson(), back, error));
  CHECK(json::print(back.toJson()) == json::print(m.toJson()));
  // A map over a scalar parameter, or of the wrong rank, is refused.
  auto firstMap = [](json::Value &manifest) -> json::Value & {
    return const_cast<json::Value &>(*manifest.get("tensor_maps")).array[0];
  };
  json::Value bad = m.toJson();
  firstMap(bad).set("param", json::Value::num(14)); // the scalar `scale`
  CHECK_FALSE(KernelManifest::fromJson(bad, back, error));
  CHECK(error == "manifest field 'tensor_maps[].param' does not name a view parameter");
  bad = m.toJson();
  json::Value box = *firstMap(bad).get("box");
  box.array.pop_back();
  firstMap(bad).set("box", box);
  CHECK_FALSE(KernelManifest::fromJson(bad, back, error));
  CHECK(error == "manifest field 'tensor_maps[].box' must have the view's rank");
  // The state feeds no tensor-core product: its copies are not swizzled. A
  // swizzle the hardware lacks is refused.
  CHECK(m.tensorMaps[0].swizzle == 0);
  bad = m.toJson();
  firstMap(bad).set("swizzle", json::Value::num(48));
  CHECK_FALSE(KernelManifest::fromJson(bad, back, error));
  CHECK(error == "manifest field 'tensor_maps[].swizzle' must be 0, 32, 64 or 128");
  json::Value swizzled = m.toJson();
  firstMap(swizzled).set("swizzle", json::Value::num(128));
  REQUIRE(KernelManifest::fromJson(swizzled, back, error));
  CHECK(back.tensorMaps[0].swizzle == 128);
}

/// The manifest of the bundled prefill op under one of its sm_90a schedules
/// (compiled, not assembled).
static KernelManifest prefillOpManifest(const std::string &schedule) {
  auto ctx = makeContext();
  Compiled c;
  GpuBuild build;
  std::string errText;
  llvm::raw_string_ostream errs(errText);
  std::string root = KILN_SOURCE_DIR;
  bool ok = compileOp(*ctx, root + "/ops/gdn/prefill.tile",
                      root + "/ops/gdn/schedules/" + schedule + ".yaml", {}, c, errs) &&
            buildForGpu(c, /*assemble=*/false, build, errs);
  INFO(errText);
  REQUIRE(ok);
  return build.manifest;
}

TEST_CASE("an op's manifest carries its launch plan and one manifest per kernel",
          "[runtime][ptx][op]") {
  KernelManifest m = prefillOpManifest("prefill_split_sm_90a_wgmma");
  REQUIRE(m.isOp());
  CHECK(m.entry == "gdn_prefill_split");
  CHECK(m.mma == "wgmma");
  REQUIRE(m.kernels.size() == 3);
  CHECK(m.kernels[0].entry == "gdn_prefill_segments");
  CHECK(m.kernels[1].entry == "gdn_prefill_chunks");
  CHECK(m.kernels[2].entry == "gdn_prefill_scan");
  CHECK(m.kernels[1].threads == 256);
  CHECK(m.kernels[1].dynamicSharedBytes > 0);
  REQUIRE(m.plan.scratch.size() == 7); // the six tensors and the flags' epoch
  CHECK(m.plan.scratch[0].name == "seg_start");
  // Every launch argument names an op parameter or a scratch tensor of the
  // type the kernel takes.
  for (size_t i = 0; i < m.plan.launches.size(); ++i) {
    const KernelSignature &ks = m.kernels[i].signature;
    REQUIRE(m.plan.launches[i].args.size() == ks.params.size());
    for (size_t a = 0; a < ks.params.size(); ++a) {
      int64_t arg = m.plan.launches[i].args[a];
      const ParamInfo &p = arg >= 0 ? m.signature.params[arg] : m.plan.scratch[-1 - arg];
      CHECK(p.dtype == ks.params[a].dtype);
      CHECK(p.dimNames == ks.params[a].dimNames);
    }
  }
  KernelManifest back;
  std::string error;
  REQUIRE(KernelManifest::fromJson(m.toJson(), back, error));
  CHECK(json::print(back.toJson()) == json::print(m.toJson()));
  // A launch naming an argument the op lacks is refused.
  json::Value bad = m.toJson();
  const_cast<json::Value &>(*bad.get("launches"))
      .array[0]
      .set("args", json::Value::arr({json::Value::num(99)}));
  CHECK_FALSE(KernelManifest::fromJson(bad, back, error));
  CHECK(error == "launch of 'gdn_prefill_segments' names an argument the op does not have");
}

TEST_CASE("an op's manifest marks the launch that runs beside the one before it",
          "[runtime][ptx][op]") {
  KernelManifest m = prefillOpManifest("prefill_split_sm_90a_overlap");
  std::vector<std::string> beside;
  int64_t besideShared = 0;
  for (const OpPlan::Launch &l : m.plan.launches)
    if (l.overlap) {
      beside.push_back(l.kernel);
      besideShared = l.besideSharedBytes;
    }
  CHECK(beside == std::vector<std::string>{"gdn_prefill_scan_fold"});
  // `exclusive`: beside, each CTA asks for sm_90a's whole shared memory.
  CHECK(besideShared == 232448);
  for (const OpPlan::Launch &l : m.plan.launches)
    if (!l.overlap)
      CHECK(l.besideSharedBytes == 0);
  KernelManifest back;
  std::string error;
  REQUIRE(KernelManifest::fromJson(m.toJson(), back, error));
  CHECK(json::print(back.toJson()) == json::print(m.toJson()));
  // The flag is a boolean, the bytes a number.
  json::Value bad = m.toJson();
  const_cast<json::Value &>(*bad.get("launches")).array[2].set("overlap", json::Value::num(1));
  CHECK_FALSE(KernelManifest::fromJson(bad, back, error));
  CHECK(error.find("launches[].overlap") != std::string::npos);
  bad = m.toJson();
  const_cast<json::Value &>(*bad.get("launches"))
      .array[3]
      .set("beside_shared_bytes", json::Value::str("all"));
  CHECK_FALSE(KernelManifest::fromJson(bad, back, error));
  CHECK(error.find("launches[].beside_shared_bytes") != std::string::npos);
}

TEST_CASE("a launch runs beside while it leaves an SM free, half of them if exclusive",
          "[runtime][op]") {
  OpPlan::Launch l;
  CHECK_FALSE(l.runsBeside(1, 132)); // not marked overlap
  l.overlap = true;
  CHECK(l.runsBeside(131, 132));
  CHECK_FALSE(l.runsBeside(132, 132));
  l.besideSharedBytes = 232448;
  CHECK(l.runsBeside(66, 132));
  CHECK_FALSE(l.runsBeside(67, 132));
  CHECK_FALSE(l.runsBeside(128, 132)); // 2x8192 16/32 would leave 4 SMs
}

TEST_CASE("runOpPlan allocates scratch from the op's dims and launches in order", "[runtime][op]") {
  OpPlan plan;
  plan.signature.name = "two_pass";
  plan.signature.runtimeDims = {"T"};
  ParamInfo x;
  x.name = "x";
  x.isView = true;
  x.access = "in";
  x.sizes = {-1, 8};
  x.dimNames = {"T", ""};
  ParamInfo y = x;
  y.name = "y";
  y.access = "out";
  ParamInfo tmp = x;
  tmp.name = "tmp";
  tmp.access = "scratch";
  plan.signature.params = {x, y};
  plan.scratch = {tmp};
  plan.launches = {{"first", {0, -1}}, {"second", {-1, 1}}};
  std::vector<float> xs(3 * 8), ys(3 * 8);
  std::vector<ArgValue> args = {ArgValue::tensor(xs.data(), {3, 8}, DType::F32),
                                ArgValue::tensor(ys.data(), {3, 8}, DType::F32)};
  std::vector<float> scratch;
  std::vector<std::string> order;
  std::string error;
  auto allocate = [&](const ParamInfo &s, size_t bytes, ArgValue &out, std::string &) {
    CHECK(s.name == "tmp");
    CHECK(bytes == 3 * 8 * 4);
    CHECK(out.shape == std::vector<int64_t>{3, 8});
    scratch.resize(bytes / 4);
    out.data = scratch.data();
    return true;
  };
  auto launch = [&](size_t step, const std::vector<ArgValue> &kargs, std::string &) {
    order.push_back(plan.launches[step].kernel);
    REQUIRE(kargs.size() == 2);
    CHECK(kargs[step == 0 ? 1 : 0].data == scratch.data());
    return true;
  };
  REQUIRE(runOpPlan(plan, args, allocate, launch, error));
  CHECK(order == std::vector<std::string>{"first", "second"});
  // A failing launch names the op, the step and the kernel.
  auto failing = [&](size_t, const std::vector<ArgValue> &, std::string &err) {
    err = "boom";
    return false;
  };
  CHECK_FALSE(runOpPlan(plan, args, allocate, failing, error));
  CHECK(error == "op 'two_pass', launch 0 ('first'): boom");
  // The op's own arguments are checked first.
  args[1] = ArgValue::tensor(ys.data(), {4, 8}, DType::F32);
  CHECK_FALSE(runOpPlan(plan, args, allocate, launch, error));
  CHECK(error.find("(T) is 4 but 'x' gave T = 3") != std::string::npos);
}

TEST_CASE("runOpPlan rounds aligned dims up before sizing scratch", "[runtime][op]") {
  OpPlan plan;
  plan.signature.name = "padded";
  plan.signature.runtimeDims = {"T"};
  ParamInfo x;
  x.name = "x";
  x.isView = true;
  x.access = "in";
  x.sizes = {-1};
  x.dimNames = {"T"};
  ParamInfo tmp;
  tmp.name = "tmp";
  tmp.isView = true;
  tmp.access = "scratch";
  tmp.sizes = {2, -1};
  tmp.dimNames = {"", "TP"};
  plan.signature.params = {x};
  plan.alignedDims = {{"TP", "T", 4}};
  plan.scratch = {tmp};
  plan.launches = {{"k", {0, -1}}};
  // The manifest form survives a round trip.
  OpPlan back;
  back.signature = plan.signature;
  std::string error;
  REQUIRE(OpPlan::fromJson(plan.toJson(), back, error));
  REQUIRE(back.alignedDims.size() == 1);
  CHECK(back.alignedDims[0].name == "TP");
  CHECK(back.alignedDims[0].of == "T");
  CHECK(back.alignedDims[0].multiple == 4);
  for (int64_t t : {1, 4, 5, 63}) {
    std::vector<float> xs(t), scratch;
    std::vector<ArgValue> args = {ArgValue::tensor(xs.data(), {t}, DType::F32)};
    auto allocate = [&](const ParamInfo &, size_t bytes, ArgValue &out, std::string &) {
      CHECK(out.shape == std::vector<int64_t>{2, (t + 3) / 4 * 4});
      CHECK(bytes == size_t(2 * ((t + 3) / 4 * 4) * 4));
      scratch.resize(bytes / 4);
      out.data = scratch.data();
      return true;
    };
    auto launch = [&](size_t, const std::vector<ArgValue> &, std::string &) { return true; };
    REQUIRE(runOpPlan(back, args, allocate, launch, error));
  }
  // A plan that rounds up a dim the op does not have says so.
  OpPlan unbound = back;
  unbound.alignedDims[0].of = "Q";
  std::vector<float> one(1);
  CHECK_FALSE(runOpPlan(
      unbound, {ArgValue::tensor(one.data(), {1}, DType::F32)},
      [](const ParamInfo &, size_t, ArgValue &, std::string &) { return true; },
      [](size_t, const std::vector<ArgValue> &, std::string &) { return true; }, error));
  CHECK(error == "aligned dim 'TP' rounds up 'Q', which has no value");
  // A bad multiple in a manifest is refused.
  json::Value bad = plan.toJson();
  const_cast<json::Value &>(*bad.get("aligned_dims")).array[0].set("multiple", json::Value::num(0));
  OpPlan refused;
  CHECK_FALSE(OpPlan::fromJson(bad, refused, error));
  CHECK(error == "manifest field 'aligned_dims[].multiple' must be positive");
}
