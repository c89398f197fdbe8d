//===- ManifestBuilder.cpp - a manifest from a scheduled kernel -----------===//
#include "backends/ptx/ManifestBuilder.h"
#include "backends/cpu/KernelSignature.h"
#include "lowering/analysis/KernelPlan.h"
#include "lowering/analysis/KernelWalk.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace kiln;

json::Value kiln::gridExprJson(Attribute e) {
  if (auto name = dyn_cast<StringAttr>(e))
    return json::Value::str(name.str());
  if (auto n = dyn_cast<IntegerAttr>(e))
    return json::Value::num(n.getInt());
  std::vector<json::Value> parts;
  for (Attribute p : cast<ArrayAttr>(e))
    parts.push_back(gridExprJson(p));
  return json::Value::arr(parts);
}

bool kiln::buildManifest(tile::KernelOp kernel, KernelManifest &m, std::string &error) {
  auto schedule = kernel.getScheduleAttr();
  m.entry = kernel.getSymName().str();
  m.target = schedule ? schedule.getTarget().str() : "";
  m.threads = schedule ? schedule.getWarps() * 32 : 0;
  m.mma = schedule ? schedule.getMma().str() : "";
  m.roundedOperands = roundsMatrixOperands(kernel);
  m.signature = signatureOf(kernel);
  if (schedule) {
    FailureOr<KernelPlan> plan = KernelPlan::build(kernel);
    if (failed(plan)) {
      error = "the kernel's roles and pipelines cannot be planned";
      return false;
    }
    m.dynamicSharedBytes = plan->dynamicSharedBytes;
    m.persistent = plan->persistent;
    // The tensor maps come from the lowered kernel (kTensorMapsAttr): a
    // ring's swizzle depends on thread layouts, not chosen yet here.
  }
  tile::readConsts(kernel, m.consts, m.types);
  if (schedule)
    for (NamedAttribute p : schedule.getParams())
      if (auto i = dyn_cast<IntegerAttr>(p.getValue()))
        m.consts[p.getName().str()] = i.getInt();
  tile::ProgramIdsOp ids;
  kernel.walk([&](tile::ProgramIdsOp op) { ids = op; });
  m.grid.clear();
  if (!ids) {
    m.grid.push_back(json::Value::num(1));
    return true;
  }
  for (int64_t axis : launchOrder(ids)) {
    Attribute e = dimExprOf(ids.getExtents()[axis], kernel);
    if (!e) {
      error = "grid axis " + std::to_string(axis) +
              " has an extent that is not built from dims and constants";
      return false;
    }
    m.grid.push_back(gridExprJson(e));
  }
  return true;
}
