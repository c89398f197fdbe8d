//===- Manifest.cpp - what a launcher needs to know about a kernel --------===//
#include "backends/runtime/Manifest.h"
#include "backends/runtime/CheckedInt.h"

#include <fstream>
#include <sstream>

using namespace kiln;
using json::Value;

Value KernelManifest::toJson() const {
  Value v = Value::obj();
  v.set("entry", Value::str(entry));
  v.set("target", Value::str(target));
  v.set("image", Value::str(image));
  v.set("op", Value::str(op));
  v.set("schedule", Value::str(schedule));
  v.set("mma", Value::str(mma));
  v.set("rounded_operands", Value::flag(roundedOperands));
  v.set("threads", Value::num(threads));
  v.set("dynamic_shared_bytes", Value::num(dynamicSharedBytes));
  v.set("grid", Value::arr(grid));
  v.set("persistent", Value::num(persistent));
  Value maps = Value::arr();
  for (const TensorMapInfo &t : tensorMaps) {
    Value q = Value::obj();
    q.set("param", Value::num(t.param));
    q.set("box", Value::nums(t.box));
    q.set("swizzle", Value::num(t.swizzle));
    maps.array.push_back(q);
  }
  v.set("tensor_maps", maps);
  if (!divisors.empty())
    v.set("divisors", Value::arr(divisors));
  signatureToJson(signature, v);
  Value consts = Value::obj();
  for (auto &[k, c] : this->consts)
    consts.set(k, Value::num(c));
  for (auto &[k, t] : types)
    consts.set(k, Value::str(t));
  v.set("consts", consts);
  Value res = Value::obj();
  res.set("registers", Value::num(registers));
  res.set("static_shared_bytes", Value::num(staticSharedBytes));
  res.set("spill_bytes", Value::num(spillBytes));
  v.set("resources", res);
  if (isOp()) {
    json::Value p = plan.toJson();
    for (auto &[k, x] : p.object)
      v.set(k, x);
    Value ks = Value::arr();
    for (const KernelManifest &k : kernels)
      ks.array.push_back(k.toJson());
    v.set("kernels", ks);
  }
  return v;
}

bool KernelManifest::fromJson(const Value &v, KernelManifest &m, std::string &error) {
  auto need = [&](const Value *x, Value::Kind kind, const std::string &what) {
    return manifestField(x, kind, what, error);
  };
  const Value *f;
  if (!need(f = v.get("entry"), Value::String, "entry"))
    return false;
  m.entry = f->string;
  if (!need(f = v.get("target"), Value::String, "target"))
    return false;
  m.target = f->string;
  if (!need(f = v.get("image"), Value::String, "image"))
    return false;
  m.image = f->string;
  if ((f = v.get("op")) && f->kind == Value::String)
    m.op = f->string;
  if ((f = v.get("schedule")) && f->kind == Value::String)
    m.schedule = f->string;
  if ((f = v.get("mma")) && f->kind == Value::String)
    m.mma = f->string;
  if ((f = v.get("rounded_operands")) && f->kind == Value::Bool)
    m.roundedOperands = f->boolean;
  if (!need(f = v.get("threads"), Value::Number, "threads"))
    return false;
  m.threads = f->asInt();
  if ((f = v.get("dynamic_shared_bytes")) && f->kind == Value::Number)
    m.dynamicSharedBytes = f->asInt();
  if (!need(f = v.get("grid"), Value::Array, "grid"))
    return false;
  m.grid = f->array;
  if (m.grid.size() < 1 || m.grid.size() > 3) {
    error = "manifest field 'grid' must have 1 to 3 extents";
    return false;
  }
  if ((f = v.get("persistent")) && f->kind == Value::Number)
    m.persistent = f->asInt();
  m.signature = {};
  m.signature.name = m.entry;
  if (!signatureFromJson(v, m.signature, error))
    return false;
  m.tensorMaps.clear();
  if ((f = v.get("tensor_maps"))) {
    if (!need(f, Value::Array, "tensor_maps"))
      return false;
    for (auto &q : f->array) {
      TensorMapInfo t;
      const Value *g;
      if (!need(g = q.get("param"), Value::Number, "tensor_maps[].param"))
        return false;
      t.param = g->asInt();
      if (t.param < 0 || t.param >= (int64_t)m.signature.params.size() ||
          !m.signature.params[t.param].isView) {
        error = "manifest field 'tensor_maps[].param' does not name a view parameter";
        return false;
      }
      if (!need(g = q.get("box"), Value::Array, "tensor_maps[].box"))
        return false;
      for (auto &b : g->array)
        t.box.push_back(b.asInt());
      if (t.box.size() != m.signature.params[t.param].sizes.size()) {
        error = "manifest field 'tensor_maps[].box' must have the view's rank";
        return false;
      }
      if ((g = q.get("swizzle"))) {
        if (!need(g, Value::Number, "tensor_maps[].swizzle"))
          return false;
        t.swizzle = g->asInt();
        if (t.swizzle != 0 && t.swizzle != 32 && t.swizzle != 64 && t.swizzle != 128) {
          error = "manifest field 'tensor_maps[].swizzle' must be 0, 32, 64 or 128";
          return false;
        }
      }
      m.tensorMaps.push_back(t);
    }
  }
  m.divisors.clear();
  if ((f = v.get("divisors"))) {
    if (!need(f, Value::Array, "divisors"))
      return false;
    m.divisors = f->array;
  }
  if ((f = v.get("consts")) && f->kind == Value::Object)
    for (auto &[k, c] : f->object) {
      if (c.kind == Value::String)
        m.types[k] = c.string;
      else
        m.consts[k] = c.asInt();
    }
  if ((f = v.get("resources")) && f->kind == Value::Object) {
    const Value *g;
    if ((g = f->get("registers")))
      m.registers = g->asInt();
    if ((g = f->get("static_shared_bytes")))
      m.staticSharedBytes = g->asInt();
    if ((g = f->get("spill_bytes")))
      m.spillBytes = g->asInt();
  }
  m.plan = {};
  m.kernels.clear();
  if (v.get("launches")) {
    m.plan.signature = m.signature;
    if (!OpPlan::fromJson(v, m.plan, error))
      return false;
    if (!need(f = v.get("kernels"), Value::Array, "kernels"))
      return false;
    for (auto &k : f->array) {
      KernelManifest km;
      if (!fromJson(k, km, error))
        return false;
      m.kernels.push_back(km);
    }
    if (m.kernels.size() != m.plan.launches.size()) {
      error = "an op manifest needs one kernel manifest per launch";
      return false;
    }
  }
  return true;
}

bool KernelManifest::load(const std::string &path, KernelManifest &m, std::string &error) {
  Value v;
  if (!json::parseFile(path, v, error))
    return false;
  if (!fromJson(v, m, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

static std::string exprText(const Value &e, bool nested = false);

bool kiln::evalGridExpr(const Value &e, const std::map<std::string, int64_t> &dims, int64_t &out,
                        std::string &error) {
  if (e.kind == Value::Number) {
    out = e.asInt();
    return true;
  }
  if (e.kind == Value::String) {
    auto it = dims.find(e.string);
    if (it == dims.end()) {
      error = "grid uses dim '" + e.string + "' that has no value";
      return false;
    }
    out = it->second;
    return true;
  }
  if (e.kind != Value::Array || e.array.size() != 3 || e.array[0].kind != Value::String) {
    error = "malformed grid expression";
    return false;
  }
  int64_t a, b;
  if (!evalGridExpr(e.array[1], dims, a, error) || !evalGridExpr(e.array[2], dims, b, error))
    return false;
  const std::string &op = e.array[0].string;
  if ((op == "div" || op == "ceildiv") && b == 0) {
    error = "grid expression divides by zero";
    return false;
  }
  // Checked (CheckedInt.h): a product of large dims that wrapped would
  // launch a wrong grid.
  bool wraps = false;
  if (op == "add")
    wraps = !checkedInt64('+', a, b, out);
  else if (op == "sub")
    wraps = !checkedInt64('-', a, b, out);
  else if (op == "mul")
    wraps = !checkedInt64('*', a, b, out);
  else if (op == "div")
    wraps = !checkedInt64('/', a, b, out);
  else if (op == "ceildiv")
    wraps = !checkedInt64('+', a, b - 1, out) || !checkedInt64('/', out, b, out);
  else if (op == "min")
    out = std::min(a, b);
  else if (op == "max")
    out = std::max(a, b);
  else {
    error = "unknown grid operator '" + op + "'";
    return false;
  }
  if (wraps) {
    error = "grid expression " + exprText(e) + " does not fit in 64 bits at " + std::to_string(a) +
            ", " + std::to_string(b);
    return false;
  }
  return true;
}

/// A grid expression as the source would write it: `HV / H`.
static std::string exprText(const Value &e, bool nested) {
  if (e.kind == Value::String)
    return e.string;
  if (e.kind != Value::Array || e.array.size() != 3)
    return std::to_string(e.asInt());
  const std::string &op = e.array[0].string;
  std::string a = exprText(e.array[1], true), b = exprText(e.array[2], true);
  if (op == "ceildiv" || op == "min" || op == "max")
    return (op == "ceildiv" ? "cdiv(" : op == "min" ? "minimum(" : "maximum(") + a + ", " + b + ")";
  std::string sym = op == "add" ? " + " : op == "sub" ? " - " : op == "mul" ? " * " : " / ";
  return nested ? "(" + a + sym + b + ")" : a + sym + b;
}

uint64_t kiln::invariantDivisorArg(int64_t d) {
  uint64_t l = 0;
  while ((int64_t(1) << l) < d)
    ++l;
  uint64_t s = 31 + l; // <= 62: 2^s fits in 64 bits
  uint64_t m = ((uint64_t(1) << s) + uint64_t(d) - 1) / uint64_t(d);
  return m | (s << 32);
}

bool kiln::invariantDivisorArgs(const std::vector<Value> &divisors,
                                const std::map<std::string, int64_t> &dims,
                                std::vector<uint64_t> &out, std::string &error) {
  out.clear();
  for (const Value &e : divisors) {
    int64_t d;
    if (!evalGridExpr(e, dims, d, error))
      return false;
    if (d < 1 || d >= (int64_t(1) << 31)) {
      error = "the kernel divides by " + exprText(e) + " = " + std::to_string(d) +
              ", which must lie in [1, 2^31)";
      return false;
    }
    out.push_back(invariantDivisorArg(d));
  }
  return true;
}
