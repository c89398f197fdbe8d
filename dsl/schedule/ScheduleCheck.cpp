//===- ScheduleCheck.cpp - a schedule against the kernel it schedules -----===//
#include "dsl/TileDialect.h"
#include "dsl/schedule/Schedule.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::tile;

static int64_t tileBytes(TileType t) {
  return t.getNumElements() * ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

int64_t kiln::pipelineSmemBytes(const Schedule &s, KernelOp kernel) {
  llvm::StringMap<Operation *> byId = kernel.getOpsById();
  int64_t total = 0;
  for (const Pipeline &p : s.pipelines)
    for (const Named &buf : p.buffers)
      if (p.copy.name == "shared") {
        Operation *op = byId.lookup(buf.name);
        if (op && op->getNumResults() == 1)
          if (auto tile = dyn_cast<TileType>(op->getResult(0).getType()))
            total += p.depth * tileBytes(tile);
      } else if (auto load = dyn_cast_or_null<LoadOp>(KernelOp::copiedBy(byId.lookup(buf.name))))
        total += p.depth * tileBytes(load.getResult().getType());
      else if (auto store = dyn_cast_or_null<StoreOp>(byId.lookup(buf.name)))
        total += p.depth * tileBytes(store.getValue().getType());
  return total;
}

std::pair<Operation *, unsigned> kiln::loopCarrying(Operation *init) {
  if (init->getNumResults() != 1)
    return {nullptr, 0};
  for (OpOperand &use : init->getResult(0).getUses())
    if (auto loop = dyn_cast<scf::ForOp>(use.getOwner());
        loop && use.getOperandNumber() >= loop.getNumControlOperands())
      return {loop, use.getOperandNumber() - loop.getNumControlOperands()};
  return {nullptr, 0};
}

bool kiln::applySchedule(const Schedule &s, KernelOp kernel, llvm::raw_ostream &errs) {
  MLIRContext *ctx = kernel.getContext();
  llvm::StringMap<Operation *> byId = kernel.getOpsById();
  auto knownIds = [&] {
    std::vector<std::string> sorted;
    for (auto &e : byId)
      sorted.push_back(e.getKey().str());
    std::sort(sorted.begin(), sorted.end());
    std::string list;
    for (auto &id : sorted)
      list += (list.empty() ? "" : ", ") + id;
    return list;
  };
  ProgramIdsOp ids = kernel.getProgramIds();
  auto axes = ids.getNames().getAsValueRange<StringAttr>();
  for (const Named &g : s.grid)
    if (llvm::find(axes, g.name) == axes.end()) {
      errs << s.diag(g.pos, "kernel '" + kernel.getSymName().str() + "' has no grid axis '" +
                                g.name + "'");
      return false;
    }
  if (!s.grid.empty() && s.grid.size() != ids.getNames().size()) {
    errs << s.diag(s.grid.front().pos, "grid must order all " +
                                           std::to_string(ids.getNames().size()) +
                                           " axes of the kernel");
    return false;
  }
  for (const Role &r : s.roles)
    for (const Named &op : r.ops)
      if (!byId.count(op.name)) {
        errs << s.diag(op.pos, "role '" + r.name.name + "' names op '" + op.name +
                                   "' that the kernel lacks (op ids: " + knownIds() + ")");
        return false;
      }
  // A var kept in tensor memory is named by its first value, which starts a
  // loop's carried value.
  for (const Named &var : s.resident) {
    Operation *init = byId.lookup(var.name);
    if (!init || !loopCarrying(init).first) {
      errs << s.diag(var.pos, s.residentKey + " names '" + var.name +
                                  "', which is not a var that a "
                                  "loop of kernel '" +
                                  kernel.getSymName().str() + "' carries" +
                                  (init ? "" : " (op ids: " + knownIds() + ")"));
      return false;
    }
  }
  // A layout is chosen for a tile: the op must make one, of the layout's rank.
  for (const LayoutRequest &req : s.layouts) {
    Operation *op = byId.lookup(req.op.name);
    auto tile = op && op->getNumResults() == 1 ? dyn_cast<TileType>(op->getResult(0).getType())
                                               : TileType();
    if (!tile || tile.getRank() < 1) {
      errs << s.diag(req.op.pos, "layouts names '" + req.op.name + "', which " +
                                     (op ? "makes no tile of rank 1 or more" : "the kernel lacks") +
                                     (op ? "" : " (op ids: " + knownIds() + ")"));
      return false;
    }
    if (tile.getRank() != (int64_t)req.lanes.size()) {
      std::string shape;
      for (int64_t e : tile.getShape())
        shape += (shape.empty() ? "" : ", ") + std::to_string(e);
      errs << s.diag(req.op.pos, "the layout of '" + req.op.name + "' has " +
                                     std::to_string(req.lanes.size()) + " dims, but its tile [" +
                                     shape + "] has " + std::to_string(tile.getRank()));
      return false;
    }
  }
  for (const Pipeline &p : s.pipelines)
    for (const Named &buf : p.buffers) {
      // A shared ring carries any tile a role computes.
      if (p.copy.name == "shared") {
        Operation *op = byId.lookup(buf.name);
        if (!op || op->getNumResults() != 1 || !isa<TileType>(op->getResult(0).getType())) {
          errs << s.diag(
              buf.pos,
              "pipeline '" + p.name.name + "' carries '" + buf.name + "', which " +
                  (op ? "makes no tile" : "the kernel lacks (op ids: " + knownIds() + ")") +
                  "; a `copy: shared` ring carries tiles one role computes "
                  "and others read");
          return false;
        }
        continue;
      }
      // Bulk copies carry stores out; every other copy brings loads in.
      bool out = p.copy.name == "bulk";
      Operation *op = out ? byId.lookup(buf.name) : KernelOp::copiedBy(byId.lookup(buf.name));
      if (!op || (out ? !isa<StoreOp>(op) : !isa<LoadOp>(op))) {
        std::string hint = !op   ? " (op ids: " + knownIds() + ")"
                           : out ? "; a load travels by `copy: tma` (or ld)"
                                 : "; a store leaves by `copy: bulk`";
        errs << s.diag(buf.pos, "pipeline '" + p.name.name + "' carries '" + buf.name +
                                    "', which is not a " + (out ? "store" : "load") +
                                    " of the kernel" + hint);
        return false;
      }
    }
  if (s.roles.size() > 1) {
    // Stores, signals and waits have effects: exactly one role must own
    // each.
    std::set<std::string> owned;
    for (const Role &r : s.roles)
      for (const Named &op : r.ops)
        owned.insert(op.name);
    // In program order, so the first unowned one is the one named.
    std::string unowned, what;
    kernel.walk([&](Operation *op) {
      if (!isa<StoreOp, SignalOp, WaitOp>(op))
        return;
      auto id = op->getAttrOfType<StringAttr>(kOpIdAttr);
      if (unowned.empty() && id && !owned.count(id.str())) {
        unowned = id.str();
        what = isa<StoreOp>(op) ? "store" : isa<WaitOp>(op) ? "wait" : "signal";
      }
    });
    if (!unowned.empty()) {
      std::string whose = what == "wait" ? "that reads after it (or a role of its own that polls "
                                           "the flag for the others)"
                                         : "that writes it";
      errs << s.diag(s.roles[0].name.pos, what + " '" + unowned + "' is in no role; with several " +
                                              "roles each " + what +
                                              " must be listed under the role " + whose);
      return false;
    }
    for (const Pipeline &p : s.pipelines)
      for (const Named &buf : p.buffers)
        if (!owned.count(buf.name)) {
          errs << s.diag(buf.pos,
                         p.copy.name == "shared"
                             ? "no role computes '" + buf.name + "' for ring '" + p.name.name +
                                   "': list it in the ops of the role that writes the stages"
                             : "no role issues the copies of '" + buf.name +
                                   "': list it in the ops of the role that copies it");
          return false;
        }
  } else {
    for (const Pipeline &p : s.pipelines)
      if (p.copy.name == "shared") {
        errs << s.diag(p.copy.pos, "pipeline '" + p.name.name +
                                       "' is a `copy: shared` ring, which one role fills for "
                                       "others to read; this kernel has one role");
        return false;
      }
  }
  for (const Pipeline &p : s.pipelines)
    for (const Named &buf : p.buffers) {
      Operation *load = byId.lookup(buf.name);
      if (p.depth > 1 && !s.persistent && !load->getParentOfType<scf::ForOp>()) {
        errs << s.diag(p.depthPos, "depth " + std::to_string(p.depth) + " never fills: '" +
                                       buf.name +
                                       "' runs once per CTA (no loop around it); use depth 1, or "
                                       "`persistent` so each CTA loops over grid points");
        return false;
      }
    }
  int64_t smem = pipelineSmemBytes(s, kernel);
  if (s.target->isGpu && smem > s.smemBudget) {
    const Pipeline &last = s.pipelines.back();
    errs << s.diag(last.depthPos.line ? last.depthPos : last.name.pos,
                   "the pipelines need " + std::to_string(smem) +
                       " bytes of shared memory; the budget is " + std::to_string(s.smemBudget) +
                       " bytes");
    return false;
  }

  SmallVector<NamedAttribute> params;
  auto consts = kernel->getAttrOfType<DictionaryAttr>("tile.consts");
  for (auto &[name, v] : s.params) {
    int64_t value = v.value;
    if (consts && consts.getAs<StringAttr>(name))
      continue; // a dtype param: tile.consts carries the type it names
    if (!v.symbol.empty() && consts)
      if (auto c = consts.getAs<IntegerAttr>(v.symbol))
        value = c.getInt();
    params.push_back(NamedAttribute(StringAttr::get(ctx, name),
                                    IntegerAttr::get(IntegerType::get(ctx, 64), value)));
  }
  auto strs = [&](const std::vector<Named> &v) {
    SmallVector<Attribute> out;
    for (const Named &n : v)
      out.push_back(StringAttr::get(ctx, n.name));
    return ArrayAttr::get(ctx, out);
  };
  SmallVector<Attribute> roles, pipes;
  for (const Role &r : s.roles)
    roles.push_back(RoleAttr::get(
        ctx, StringAttr::get(ctx, r.name.name), r.firstWarp, r.numWarps, r.regs, strs(r.ops),
        r.issuesMma, r.mma.name.empty() ? StringAttr() : StringAttr::get(ctx, r.mma.name)));
  for (const Pipeline &p : s.pipelines)
    pipes.push_back(PipelineAttr::get(ctx, StringAttr::get(ctx, p.name.name), strs(p.buffers),
                                      p.depth, StringAttr::get(ctx, p.copy.name)));
  // Where the YAML wrote what a later limit may blame.
  SmallVector<NamedAttribute> sources;
  auto source = [&](StringRef key, SrcPos pos) {
    if (pos.line)
      sources.push_back(NamedAttribute(StringAttr::get(ctx, key),
                                       FileLineColLoc::get(ctx, s.path, pos.line, pos.col)));
  };
  SrcPos firstParam;
  for (auto &[name, pos] : s.paramPos)
    if (!firstParam.line || pos.line < firstParam.line)
      firstParam = pos;
  source("target", s.targetPos);
  source("warps", s.warpsPos);
  source("mma", s.mma.pos);
  source("params", firstParam);
  if (!s.pipelines.empty())
    source("pipelines", s.pipelines.front().name.pos);
  source("budgets.smem", s.smemPos);
  source("budgets.tmem_columns", s.tmemPos);
  source("budgets.regs", s.regPos);
  source(s.residentKey, s.residentPos);
  SmallVector<NamedAttribute> layouts;
  for (const LayoutRequest &req : s.layouts) {
    SmallVector<NamedAttribute> fields;
    auto field = [&](StringRef key, const std::vector<int64_t> &v) {
      if (!v.empty())
        fields.push_back(NamedAttribute(StringAttr::get(ctx, key), DenseI64ArrayAttr::get(ctx, v)));
    };
    field("lanes", req.lanes);
    field("size", req.size);
    field("warps", req.warps);
    layouts.push_back(
        NamedAttribute(StringAttr::get(ctx, req.op.name), DictionaryAttr::get(ctx, fields)));
    source("layouts." + req.op.name, req.op.pos);
  }
  kernel.setScheduleAttr(ScheduleAttr::get(
      ctx, StringAttr::get(ctx, s.target->name), DictionaryAttr::get(ctx, params), strs(s.grid),
      s.warps, StringAttr::get(ctx, s.mma.name), ArrayAttr::get(ctx, roles),
      ArrayAttr::get(ctx, pipes), s.persistent, s.swizzle, s.gatherMnMajor,
      s.regPos.line ? s.regBudget : 0, s.tmemPos.line ? s.tmemBudget : 0,
      s.resident.empty() ? ArrayAttr() : strs(s.resident), DictionaryAttr::get(ctx, sources),
      layouts.empty() ? DictionaryAttr() : DictionaryAttr::get(ctx, layouts)));
  return true;
}

Schedule Schedule::cpuReference() const {
  Schedule r = *this;
  r.target = lookupTarget("cpu");
  r.retarget = nullptr;
  r.persistent = 0;
  r.mma = {"none", mma.pos};
  r.roles.clear();
  r.pipelines.clear();
  r.layouts.clear();
  r.resident.clear();
  r.residentKey.clear();
  r.smemBudget = r.tmemBudget = r.regBudget = 0;
  r.overlap = r.exclusive = r.earlyStart = false;
  for (Schedule &section : r.sections)
    section = section.cpuReference();
  return r;
}
