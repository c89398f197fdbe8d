//===- OpPlan.cpp - run an op made of several kernel launches -------------===//
#include "backends/runtime/OpPlan.h"

using namespace kiln;
using json::Value;

static bool dtypeFromName(const std::string &n, DType &out) {
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::F64, DType::I8, DType::I32,
                  DType::I64, DType::F8E4M3})
    if (n == dtypeName(t)) {
      out = t;
      return true;
    }
  return false;
}

static Value paramToJson(const ParamInfo &p) {
  Value q = Value::obj();
  q.set("name", Value::str(p.name));
  q.set("kind", Value::str(p.isView ? "view" : "scalar"));
  q.set("dtype", Value::str(dtypeName(p.dtype)));
  if (p.isView) {
    q.set("access", Value::str(p.access));
    Value shape = Value::arr();
    for (size_t d = 0; d < p.sizes.size(); ++d)
      shape.array.push_back(p.sizes[d] < 0 ? Value::str(p.dimNames[d]) : Value::num(p.sizes[d]));
    q.set("shape", shape);
  }
  return q;
}

bool kiln::manifestField(const Value *x, Value::Kind kind, const std::string &what,
                         std::string &error) {
  if (!x || x->kind != kind) {
    error = "manifest field '" + what + "' is missing or has the wrong type";
    return false;
  }
  return true;
}

static bool paramFromJson(const Value &q, ParamInfo &p, const std::string &where,
                          std::string &error) {
  const Value *g;
  if (!manifestField(g = q.get("name"), Value::String, where + ".name", error))
    return false;
  p.name = g->string;
  if (!manifestField(g = q.get("kind"), Value::String, where + ".kind", error))
    return false;
  p.isView = g->string == "view";
  if (!manifestField(g = q.get("dtype"), Value::String, where + ".dtype", error))
    return false;
  if (!dtypeFromName(g->string, p.dtype)) {
    error = "parameter '" + p.name + "' has unknown dtype '" + g->string + "'";
    return false;
  }
  if (!p.isView)
    return true;
  if (!manifestField(g = q.get("access"), Value::String, where + ".access", error))
    return false;
  p.access = g->string;
  if (!manifestField(g = q.get("shape"), Value::Array, where + ".shape", error))
    return false;
  for (auto &d : g->array) {
    p.sizes.push_back(d.kind == Value::String ? -1 : d.asInt());
    p.dimNames.push_back(d.kind == Value::String ? d.string : "");
  }
  return true;
}

void kiln::signatureToJson(const KernelSignature &sig, Value &into) {
  Value dims = Value::arr();
  for (auto &d : sig.runtimeDims)
    dims.array.push_back(Value::str(d));
  into.set("dims", dims);
  Value params = Value::arr();
  for (const ParamInfo &p : sig.params)
    params.array.push_back(paramToJson(p));
  into.set("params", params);
}

/// The list of parameters in field `field` of `v`.
static bool paramListFromJson(const Value &v, const std::string &field, std::vector<ParamInfo> &out,
                              std::string &error) {
  const Value *f = v.get(field);
  if (!manifestField(f, Value::Array, field, error))
    return false;
  for (auto &q : f->array) {
    ParamInfo p;
    if (!paramFromJson(q, p, field + "[]", error))
      return false;
    out.push_back(p);
  }
  return true;
}

bool kiln::signatureFromJson(const Value &v, KernelSignature &sig, std::string &error) {
  const Value *f;
  if (!manifestField(f = v.get("dims"), Value::Array, "dims", error))
    return false;
  for (auto &d : f->array)
    sig.runtimeDims.push_back(d.string);
  return paramListFromJson(v, "params", sig.params, error);
}

Value OpPlan::toJson() const {
  Value v = Value::obj();
  Value a = Value::arr();
  for (const AlignedDim &d : alignedDims) {
    Value q = Value::obj();
    q.set("name", Value::str(d.name));
    q.set("of", Value::str(d.of));
    q.set("multiple", Value::num(d.multiple));
    a.array.push_back(q);
  }
  v.set("aligned_dims", a);
  Value s = Value::arr();
  for (const ParamInfo &p : scratch)
    s.array.push_back(paramToJson(p));
  v.set("scratch", s);
  Value l = Value::arr();
  for (const Launch &launch : launches) {
    Value q = Value::obj();
    q.set("kernel", Value::str(launch.kernel));
    q.set("args", Value::nums(launch.args));
    if (launch.overlap)
      q.set("overlap", Value::flag(true));
    if (launch.besideSharedBytes)
      q.set("beside_shared_bytes", Value::num(launch.besideSharedBytes));
    if (launch.early)
      q.set("early", Value::flag(true));
    l.array.push_back(q);
  }
  v.set("launches", l);
  return v;
}

bool OpPlan::fromJson(const Value &v, OpPlan &out, std::string &error) {
  const Value *f;
  if ((f = v.get("aligned_dims"))) {
    if (!manifestField(f, Value::Array, "aligned_dims", error))
      return false;
    for (auto &q : f->array) {
      AlignedDim d;
      const Value *g;
      if (!manifestField(g = q.get("name"), Value::String, "aligned_dims[].name", error))
        return false;
      d.name = g->string;
      if (!manifestField(g = q.get("of"), Value::String, "aligned_dims[].of", error))
        return false;
      d.of = g->string;
      if (!manifestField(g = q.get("multiple"), Value::Number, "aligned_dims[].multiple", error))
        return false;
      d.multiple = g->asInt();
      if (d.multiple <= 0) {
        error = "manifest field 'aligned_dims[].multiple' must be positive";
        return false;
      }
      out.alignedDims.push_back(d);
    }
  }
  if (!paramListFromJson(v, "scratch", out.scratch, error))
    return false;
  if (!manifestField(f = v.get("launches"), Value::Array, "launches", error))
    return false;
  for (auto &q : f->array) {
    Launch l;
    const Value *g;
    if (!manifestField(g = q.get("kernel"), Value::String, "launches[].kernel", error))
      return false;
    l.kernel = g->string;
    if (!manifestField(g = q.get("args"), Value::Array, "launches[].args", error))
      return false;
    for (auto &a : g->array) {
      int64_t i = a.asInt();
      if (i >= (int64_t)out.signature.params.size() || -1 - i >= (int64_t)out.scratch.size()) {
        error = "launch of '" + l.kernel + "' names an argument the op does not have";
        return false;
      }
      l.args.push_back(i);
    }
    if ((g = q.get("overlap"))) {
      if (!manifestField(g, Value::Bool, "launches[].overlap", error))
        return false;
      l.overlap = g->boolean;
    }
    if ((g = q.get("beside_shared_bytes"))) {
      if (!manifestField(g, Value::Number, "launches[].beside_shared_bytes", error))
        return false;
      l.besideSharedBytes = g->asInt();
    }
    if ((g = q.get("early"))) {
      if (!manifestField(g, Value::Bool, "launches[].early", error))
        return false;
      l.early = g->boolean;
    }
    out.launches.push_back(l);
  }
  return true;
}

size_t kiln::scratchBytes(const ParamInfo &s, const std::map<std::string, int64_t> &dims) {
  size_t n = dtypeBytes(s.dtype);
  for (size_t d = 0; d < s.sizes.size(); ++d)
    n *= s.sizes[d] >= 0 ? s.sizes[d] : dims.at(s.dimNames[d]);
  return n;
}

bool kiln::runOpPlan(
    const OpPlan &plan, const std::vector<ArgValue> &args,
    const std::function<bool(const ParamInfo &, size_t, ArgValue &, std::string &)> &allocate,
    const std::function<bool(size_t, const std::vector<ArgValue> &, std::string &)> &launch,
    std::string &error) {
  std::map<std::string, int64_t> dims;
  if (!bindArguments(plan.signature, args, dims, error))
    return false;
  for (const OpPlan::AlignedDim &d : plan.alignedDims) {
    auto of = dims.find(d.of);
    if (of == dims.end()) {
      error = "aligned dim '" + d.name + "' rounds up '" + d.of + "', which has no value";
      return false;
    }
    dims[d.name] = (of->second + d.multiple - 1) / d.multiple * d.multiple;
  }
  std::vector<ArgValue> scratch(plan.scratch.size());
  for (size_t i = 0; i < plan.scratch.size(); ++i) {
    const ParamInfo &s = plan.scratch[i];
    for (size_t d = 0; d < s.sizes.size(); ++d)
      if (s.sizes[d] < 0 && !dims.count(s.dimNames[d])) {
        error = "scratch '" + s.name + "' uses dim '" + s.dimNames[d] + "', which has no value";
        return false;
      }
    scratch[i].dtype = s.dtype;
    for (size_t d = 0; d < s.sizes.size(); ++d)
      scratch[i].shape.push_back(s.sizes[d] >= 0 ? s.sizes[d] : dims.at(s.dimNames[d]));
    if (!allocate(s, scratchBytes(s, dims), scratch[i], error))
      return false;
  }
  for (size_t step = 0; step < plan.launches.size(); ++step) {
    std::vector<ArgValue> kargs;
    for (int64_t a : plan.launches[step].args)
      kargs.push_back(a >= 0 ? args[a] : scratch[-1 - a]);
    if (!launch(step, kargs, error)) {
      error = "op '" + plan.signature.name + "', launch " + std::to_string(step) + " ('" +
              plan.launches[step].kernel + "'): " + error;
      return false;
    }
  }
  return true;
}
