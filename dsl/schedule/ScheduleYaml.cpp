//===- ScheduleYaml.cpp - read and validate a YAML schedule ---------------===//
//
// yaml-cpp throws: every exception is caught here (YamlRead.h's readYaml)
// and turned into a diagnostic at the YAML line and column.
//
//===----------------------------------------------------------------------===//
#include "dsl/TileDialect.h"
#include "dsl/schedule/Schedule.h"

#include "dsl/schedule/YamlRead.h"

#include "llvm/ADT/StringExtras.h"

#include <map>
#include <set>

using namespace kiln;

namespace {

using namespace kiln::yamlread;

/// A key that takes one of two words: whether it says `yes`.
bool eitherWord(const YAML::Node &n, const std::string &what, const std::string &yes,
                const std::string &no) {
  std::string v = scalar(n, what);
  if (v != yes && v != no)
    throw Reject{posOf(n), what + " must be " + yes + " or " + no + ", got '" + v + "'"};
  return v == yes;
}

int64_t integer(const YAML::Node &n, const std::string &what, int64_t lo, int64_t hi) {
  std::string s = scalar(n, what);
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end)
    throw Reject{posOf(n), what + " must be an integer, got '" + s + "'"};
  if (v < lo || v > hi)
    throw Reject{posOf(n), what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                               "], got " + std::to_string(v)};
  return v;
}

std::vector<Named> names(const YAML::Node &n, const std::string &what) {
  if (!n.IsSequence())
    throw Reject{posOf(n), what + " must be a list like [a, b]"};
  std::vector<Named> out;
  for (const YAML::Node &item : n)
    out.push_back({scalar(item, what + " entry"), posOf(item)});
  return out;
}

const YAML::Node required(const YAML::Node &map, const char *key, const std::string &where) {
  YAML::Node n = map[key];
  if (!n)
    throw Reject{posOf(map), where + " needs '" + key + "'"};
  return n;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// Roles with different register budgets get them from setmaxnreg, which
/// works on whole warpgroups and only hands out registers that another
/// warpgroup gave back: the CTA starts with launchRegs() per thread.
void checkRegisterReallocation(const Schedule &s) {
  if (s.roles.size() < 2)
    return;
  bool same = llvm::all_of(s.roles, [&](const Role &r) { return r.regs == s.roles[0].regs; });
  if (same)
    return;
  if (!s.target->hasSetMaxNReg)
    throw Reject{s.roles[1].regsPos, "roles with different regs need setmaxnreg, which target " +
                                         s.target->name + " lacks; give every role the same regs"};
  // Roles may share a warpgroup (a copy warp beside an MMA warp) at one
  // register budget.
  for (const Role &r : s.roles)
    for (const Role &other : s.roles)
      if (&other != &r && other.regs != r.regs &&
          shareWarpgroup(r.firstWarp, r.numWarps, other.firstWarp, other.numWarps))
        throw Reject{r.warpsPos, "setmaxnreg sets the registers of whole warpgroups: role '" +
                                     r.name.name + "' (" + std::to_string(r.regs) +
                                     " registers) shares a warpgroup with role '" +
                                     other.name.name + "' (" + std::to_string(other.regs) +
                                     "); give roles of one warpgroup the same regs"};
  int64_t covered = 0;
  for (const Role &r : s.roles)
    covered += r.numWarps;
  if (covered != s.warps)
    throw Reject{s.warpsPos.line ? s.warpsPos : s.roles[0].warpsPos,
                 "with setmaxnreg every warp needs a role: the roles cover " +
                     std::to_string(covered) + " of " + std::to_string(s.warps) + " warps"};
}

/// The registers a CTA launches with must fit the busiest warp scheduler's
/// share of the register file (the driver refuses the launch otherwise).
void checkLaunchRegisters(const Schedule &s) {
  const TargetDesc &t = *s.target;
  int64_t perScheduler = (s.warps + t.schedulersPerSM - 1) / t.schedulersPerSM;
  int64_t most = t.regsPerSM / t.schedulersPerSM / (32 * perScheduler) / 8 * 8;
  int64_t launch = s.launchRegs();
  if (launch <= most)
    return;
  const Role &widest = *std::max_element(
      s.roles.begin(), s.roles.end(), [](const Role &a, const Role &b) { return a.regs < b.regs; });
  throw Reject{widest.regsPos,
               "a CTA of " + std::to_string(s.warps) + " warps puts " +
                   std::to_string(perScheduler) + " warps on one of the SM's " +
                   std::to_string(t.schedulersPerSM) + " schedulers, whose registers allow " +
                   std::to_string(most) + " per thread; the roles launch with " +
                   std::to_string(launch) +
                   " (lower regs, or give a producer warpgroup fewer with setmaxnreg)"};
}

void parseKernelKeys(const YAML::Node &root, Schedule &s);

/// An `mma:` value: an instruction of the target (a twin's tensor-core
/// instruction becomes its own target's).
Named mmaName(const YAML::Node &node, const Schedule &s) {
  const TargetDesc &t = *s.target;
  Named mma{scalar(node, "mma"), posOf(node)};
  const MmaKind *written = s.writtenTarget->mma(mma.name);
  if (s.retarget && written && written->tensorCores && t.tensorCoreMma())
    mma.name = t.tensorCoreMma()->name;
  if (!t.mma(mma.name)) {
    std::string list;
    for (const MmaKind &k : t.mmaKinds)
      list += (list.empty() ? "" : ", ") + k.name;
    throw Reject{mma.pos, "target " + t.name + " has no '" + mma.name +
                              "' matrix instruction (it has: " + list + ")"};
  }
  return mma;
}

/// A role's own `mma:`, for the products it runs (the chunk work of a fused
/// kernel on warp-level mma.sync beside a state on wgmma). An issuing role
/// issues the schedule's instruction, and one multiplying on whole
/// warpgroups needs whole warpgroups.
void parseRoleMma(const YAML::Node &node, const Schedule &s, Role &role) {
  role.mma = mmaName(node, s);
  if (role.issuesMma)
    throw Reject{role.mma.pos, "role '" + role.name.name + "' issues the schedule's mma ('" +
                                   s.mma.name + "'); an issuing role takes no mma of its own"};
  const MmaKind *kind = s.target->mma(role.mma.name);
  if (kind->warps > 1 && role.numWarps % kind->warps)
    throw Reject{role.mma.pos, "'mma: " + kind->name + "' multiplies on whole groups of " +
                                   std::to_string(kind->warps) + " warps, but role '" +
                                   role.name.name + "' has " + std::to_string(role.numWarps)};
}

void parseLayouts(const YAML::Node &layouts, Schedule &s);

/// `issues: mma`: a role that only issues the tensor-core products, in the
/// shape the target's instruction family is issued in.
void parseIssuer(const YAML::Node &issues, const Schedule &s, Role &role) {
  role.issuesPos = posOf(issues);
  std::string what = scalar(issues, "issues");
  if (what != "mma")
    throw Reject{role.issuesPos,
                 "a role issues 'mma' (the tensor-core products), got '" + what + "'"};
  role.issuesMma = true;
  const MmaKind *kind = s.target->mma(s.mma.name);
  if (!kind || !kind->tensorCores)
    throw Reject{role.issuesPos, "role '" + role.name.name +
                                     "' issues mma, but the schedule's mma is '" + s.mma.name +
                                     "': only tensor-core instructions (wgmma, tcgen05) have an "
                                     "issuing role"};
  if (!role.ops.empty())
    throw Reject{role.ops.front().pos,
                 "role '" + role.name.name +
                     "' issues mma and owns no ops: the ops it issues for are the computing "
                     "role's"};
  bool wholeGroups = kind->issuerWarps > 1;
  if (role.numWarps != kind->issuerWarps || (wholeGroups && role.firstWarp % kind->issuerWarps))
    throw Reject{role.warpsPos,
                 kind->name + " is issued by " +
                     (wholeGroups ? "one whole warpgroup (" + std::to_string(kind->issuerWarps) +
                                        " warps from a multiple of " +
                                        std::to_string(kind->issuerWarps) + ")"
                                  : std::string("one warp")) +
                     ", but role '" + role.name.name + "' takes warps [" +
                     std::to_string(role.firstWarp) + ", " + std::to_string(role.numWarps) + "]" +
                     (s.retarget ? " (the schedule's twin for " + s.target->name +
                                       " keeps the roles as written)"
                                 : "")};
  for (const Role &other : s.roles)
    if (other.issuesMma)
      throw Reject{role.issuesPos, "roles '" + other.name.name + "' and '" + role.name.name +
                                       "' both issue mma; one role issues every product"};
}

void parse(const YAML::Node &root, Schedule &s) {
  onlyKeys(root,
           {"target", "op", "params", "grid", "warps", "persistent", "mma", "swizzle", "mn_major",
            "roles", "pipelines", "layouts", "budgets", "tensor_memory", "registers", "kernels"},
           "the schedule");
  YAML::Node target = required(root, "target", "the schedule");
  s.targetPos = posOf(target);
  s.target = lookupTarget(scalar(target, "target"));
  if (!s.target)
    throw Reject{s.targetPos,
                 "unknown target '" + target.Scalar() + "' (known: " + targetNames() + ")"};
  s.writtenTarget = s.target;
  if (s.retarget)
    s.target = s.retarget;
  const TargetDesc &t = *s.target;
  s.smemBudget = t.smemBytes;
  s.tmemBudget = t.tmemColumns;
  s.regBudget = t.regsPerThread;

  if (YAML::Node op = root["op"])
    s.op = {scalar(op, "op"), posOf(op)};
  if (YAML::Node params = root["params"]) {
    if (!params.IsMap())
      throw Reject{posOf(params), "params must be a mapping like {BV: 32}"};
    for (auto it = params.begin(); it != params.end(); ++it) {
      std::string name = it->first.Scalar();
      SrcPos pos = posOf(it->second);
      std::string origin = s.path + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.col);
      std::string text = scalar(it->second, "param '" + name + "'");
      if (!text.empty() && (std::isalpha((unsigned char)text[0]) || text[0] == '_'))
        s.params[name] = {0, text, origin}; // the value of a const of the op, e.g. V
      else
        s.params[name] = {integer(it->second, "param '" + name + "'", 1, 1 << 20), "", origin};
      s.paramPos[name] = pos;
    }
  }
  parseKernelKeys(root, s);
  if (YAML::Node kernels = root["kernels"]) {
    if (!kernels.IsMap())
      throw Reject{posOf(kernels), "kernels must be a mapping from kernel names to their "
                                   "schedules, like {scan: {warps: 4}}"};
    for (auto it = kernels.begin(); it != kernels.end(); ++it) {
      Schedule k = s;
      k.sections.clear();
      k.grid.clear();
      k.roles.clear();
      k.pipelines.clear();
      k.layouts.clear();
      k.resident.clear();
      k.residentPos = {};
      k.residentKey.clear();
      // A kernel named twice is a repeated key (rejectRepeatedKeys).
      k.op = {it->first.Scalar(), posOf(it->first)};
      onlyKeys(it->second,
               {"grid", "warps", "persistent", "mma", "swizzle", "mn_major", "roles", "pipelines",
                "layouts", "budgets", "tensor_memory", "registers", "overlap", "exclusive",
                "early_start"},
               "the section of kernel '" + k.op.name + "'");
      parseKernelKeys(it->second, k);
      if (YAML::Node n = it->second["overlap"]) {
        k.overlapPos = posOf(n);
        k.overlap = eitherWord(n, "overlap", "true", "false");
        if (!s.target->isGpu && k.overlap)
          throw Reject{k.overlapPos, "target " + s.target->name +
                                         " runs an op's kernels one after another: no overlap"};
      }
      if (YAML::Node n = it->second["early_start"]) {
        k.earlyStartPos = posOf(n);
        k.earlyStart = eitherWord(n, "early_start", "true", "false");
        if (!s.target->isGpu && k.earlyStart)
          throw Reject{k.earlyStartPos,
                       "target " + s.target->name +
                           " runs an op's kernels one after another: no early start"};
        if (k.earlyStart && k.overlap)
          throw Reject{k.earlyStartPos, "a kernel launched beside the one before it (overlap: "
                                        "true) does not also start early"};
      }
      if (YAML::Node n = it->second["exclusive"]) {
        k.exclusivePos = posOf(n);
        k.exclusive = eitherWord(n, "exclusive", "true", "false");
        if (!s.target->isGpu && k.exclusive)
          throw Reject{k.exclusivePos, "target " + s.target->name + " has no SMs to reserve"};
        if (k.exclusive && !k.overlap)
          throw Reject{k.exclusivePos, "exclusive is for a kernel launched beside another "
                                       "(overlap: true); launched after, it has the GPU to itself"};
      }
      s.sections.push_back(std::move(k));
    }
  }
}

/// What a schedule says about one kernel: its launch shape, matrix
/// instruction, warp roles, pipelines and budgets.
void parseKernelKeys(const YAML::Node &root, Schedule &s) {
  const TargetDesc &t = *s.target;
  if (YAML::Node grid = root["grid"]) {
    s.grid = names(grid, "grid");
    std::set<std::string> seen;
    for (const Named &g : s.grid)
      if (!seen.insert(g.name).second)
        throw Reject{g.pos, "grid axis '" + g.name + "' is listed twice"};
  }
  if (YAML::Node warps = root["warps"]) {
    s.warpsPos = posOf(warps);
    s.warps = integer(warps, "warps", 1, t.maxWarps);
  }
  if (YAML::Node persistent = root["persistent"]) {
    s.persistentPos = posOf(persistent);
    if (!t.isGpu)
      throw Reject{s.persistentPos, "target " + t.name + " has no CTAs to keep resident"};
    s.persistent = integer(persistent, "persistent", 0, 32);
  }
  if (YAML::Node mma = root["mma"])
    s.mma = mmaName(mma, s);
  // Keys that choose how tensor-core operands are staged in shared memory:
  // one of two words, and only under an mma that stages them.
  auto stagingChoice = [&](const char *key, const std::string &yes, const std::string &no,
                           const std::string &what, SrcPos &pos, bool &out) {
    YAML::Node n = root[key];
    if (!n)
      return;
    pos = posOf(n);
    out = eitherWord(n, key, yes, no);
    const MmaKind *kind = t.mma(s.mma.name);
    if (!kind || !kind->tensorCores)
      throw Reject{pos, std::string(key) + " " + what + ", but the mma here is '" + s.mma.name +
                            "' (wgmma and tcgen05 stage operands)"};
  };
  stagingChoice("swizzle", "true", "false", "lays out tensor-core operands in shared memory",
                s.swizzlePos, s.swizzle);
  stagingChoice("mn_major", "gather", "direct", "says how tensor-core operands are staged",
                s.mnMajorPos, s.gatherMnMajor);
  if (YAML::Node budgets = root["budgets"]) {
    onlyKeys(budgets, {"smem", "tmem_columns", "regs"}, "budgets");
    if (YAML::Node n = budgets["smem"]) {
      s.smemPos = posOf(n);
      s.smemBudget = integer(n, "budgets.smem", 0, t.smemBytes);
    }
    if (YAML::Node n = budgets["tmem_columns"]; n && !s.retarget) {
      s.tmemPos = posOf(n);
      s.tmemBudget = integer(n, "budgets.tmem_columns", 0, t.tmemColumns);
      if (s.tmemBudget && (s.tmemBudget < 32 || (s.tmemBudget & (s.tmemBudget - 1))))
        throw Reject{s.tmemPos,
                     "tensor memory is allocated in powers of two of at least 32 columns, got " +
                         std::to_string(s.tmemBudget)};
    }
    if (YAML::Node n = budgets["regs"]) {
      s.regPos = posOf(n);
      s.regBudget = integer(n, "budgets.regs", 24, t.regsPerThread);
    }
  }
  if (root["tensor_memory"] && root["registers"])
    throw Reject{posOf(root["registers"]),
                 "a kernel keeps vars in tensor memory (tcgen05) or in registers (wgmma), "
                 "not both"};
  if (YAML::Node kept = root["tensor_memory"]) {
    // A twin for a target without tensor memory keeps the vars in
    // registers, as it drops the tensor-memory budget.
    if (!s.retarget || t.tmemColumns) {
      s.residentPos = posOf(kept);
      if (!t.tmemColumns)
        throw Reject{s.residentPos,
                     "target " + t.name + " has no tensor memory to keep loop-carried vars in"};
      if (s.mma.name != "tcgen05")
        throw Reject{s.residentPos,
                     "a var in tensor memory is updated by tcgen05 products, but the mma here "
                     "is '" +
                         s.mma.name + "'"};
      s.residentKey = "tensor_memory";
      s.resident = names(kept, "tensor_memory");
    }
  }
  if (YAML::Node kept = root["registers"]) {
    s.residentPos = posOf(kept);
    if (s.mma.name != "wgmma")
      throw Reject{s.residentPos,
                   "a var kept in registers is the accumulator of wgmma products, but the mma "
                   "here is '" +
                       s.mma.name + "'" +
                       (s.mma.name == "tcgen05" ? "; tcgen05 keeps it in tensor_memory" : "")};
    s.residentKey = "registers";
    s.resident = names(kept, "registers");
  }
  std::set<std::string> seen;
  for (const Named &n : s.resident)
    if (!seen.insert(n.name).second)
      throw Reject{n.pos, "'" + n.name + "' is listed twice in " + s.residentKey};
  if (YAML::Node roles = root["roles"]) {
    if (!roles.IsSequence())
      throw Reject{posOf(roles), "roles must be a list"};
    if (!t.isGpu && roles.size())
      throw Reject{posOf(roles), "target " + t.name + " has no warps to give roles to"};
    std::vector<int> owner(s.warps, -1);
    int64_t regsUsed = 0;
    for (const YAML::Node &r : roles) {
      onlyKeys(r, {"name", "warps", "regs", "ops", "issues", "mma"}, "a role");
      Role role;
      YAML::Node name = required(r, "name", "a role");
      role.name = {scalar(name, "role name"), posOf(name)};
      YAML::Node warps = required(r, "warps", "role '" + role.name.name + "'");
      role.warpsPos = posOf(warps);
      if (!warps.IsSequence() || warps.size() != 2)
        throw Reject{role.warpsPos, "role warps must be [first, count]"};
      role.firstWarp = integer(warps[0], "first warp", 0, s.warps - 1);
      role.numWarps = integer(warps[1], "warp count", 1, s.warps);
      if (role.firstWarp + role.numWarps > s.warps)
        throw Reject{role.warpsPos, "role '" + role.name.name + "' takes warps " +
                                        std::to_string(role.firstWarp) + ".." +
                                        std::to_string(role.firstWarp + role.numWarps - 1) +
                                        " but the CTA has " + std::to_string(s.warps) + " warps"};
      for (int64_t w = role.firstWarp; w < role.firstWarp + role.numWarps; ++w) {
        if (owner[w] >= 0)
          throw Reject{role.warpsPos, "warp " + std::to_string(w) + " is in role '" +
                                          s.roles[owner[w]].name.name + "' and in role '" +
                                          role.name.name + "'"};
        owner[w] = s.roles.size();
      }
      YAML::Node regs = required(r, "regs", "role '" + role.name.name + "'");
      role.regsPos = posOf(regs);
      role.regs = integer(regs, "regs", 24, s.regBudget);
      if (t.hasSetMaxNReg && role.regs % 8)
        throw Reject{role.regsPos, "setmaxnreg takes a multiple of 8 registers, got " +
                                       std::to_string(role.regs)};
      regsUsed += role.regs * 32 * role.numWarps;
      if (regsUsed > t.regsPerSM)
        throw Reject{role.regsPos, "roles need " + std::to_string(regsUsed) +
                                       " registers, more than the " + std::to_string(t.regsPerSM) +
                                       " of the register file"};
      if (YAML::Node ops = r["ops"])
        role.ops = names(ops, "ops");
      if (YAML::Node issues = r["issues"])
        parseIssuer(issues, s, role);
      if (YAML::Node mma = r["mma"])
        parseRoleMma(mma, s, role);
      s.roles.push_back(role);
    }
    checkRegisterReallocation(s);
    if (t.isGpu)
      checkLaunchRegisters(s);
  }
  // With roles, the lowering checks each computing role's warps.
  if (const MmaKind *k = t.mma(s.mma.name);
      k && k->warps > 1 && s.roles.empty() && s.warps % k->warps)
    throw Reject{s.warpsPos.line ? s.warpsPos : s.mma.pos,
                 "'mma: " + k->name + "' multiplies on whole groups of " +
                     std::to_string(k->warps) + " warps: warps must be a multiple of " +
                     std::to_string(k->warps) + ", got " + std::to_string(s.warps)};
  if (YAML::Node layouts = root["layouts"])
    parseLayouts(layouts, s);
  if (YAML::Node pipes = root["pipelines"]) {
    if (!pipes.IsSequence())
      throw Reject{posOf(pipes), "pipelines must be a list"};
    for (const YAML::Node &p : pipes) {
      onlyKeys(p, {"name", "buffers", "depth", "copy"}, "a pipeline");
      Pipeline pipe;
      YAML::Node name = required(p, "name", "a pipeline");
      pipe.name = {scalar(name, "pipeline name"), posOf(name)};
      pipe.buffers = names(required(p, "buffers", "pipeline '" + pipe.name.name + "'"), "buffers");
      if (YAML::Node depth = p["depth"]) {
        pipe.depthPos = posOf(depth);
        pipe.depth = integer(depth, "depth", 1, 16);
      }
      YAML::Node copy = required(p, "copy", "pipeline '" + pipe.name.name + "'");
      pipe.copy = {scalar(copy, "copy"), posOf(copy)};
      if (!contains(t.copyKinds, pipe.copy.name))
        throw Reject{pipe.copy.pos, "target " + t.name + " cannot copy with '" + pipe.copy.name +
                                        "' (it copies with " + llvm::join(t.copyKinds, ", ") + ")"};
      s.pipelines.push_back(pipe);
    }
  }
}

/// `layouts: {S0: {lanes: [4, 8]}}`: per op id, lanes (required), size and
/// warps per tile dim, powers of two that fit a warp and the CTA.
void parseLayouts(const YAML::Node &layouts, Schedule &s) {
  const TargetDesc &t = *s.target;
  if (!t.isGpu)
    throw Reject{posOf(layouts),
                 "target " + t.name + " has no lanes or warps to lay tiles out over"};
  if (!layouts.IsMap())
    throw Reject{posOf(layouts), "layouts must be a mapping from op ids to thread layouts, like "
                                 "{S0: {lanes: [4, 8]}}"};
  for (auto it = layouts.begin(); it != layouts.end(); ++it) {
    LayoutRequest req;
    req.op = {scalar(it->first, "an op id"), posOf(it->first)};
    std::string of = "the layout of '" + req.op.name + "'";
    onlyKeys(it->second, {"size", "lanes", "warps"}, of);
    // Each list: one power of two per tile dim, their product at most `most`;
    // after lanes, as many entries as lanes has.
    auto list = [&](const char *key, int64_t most, const std::string &bound) {
      std::vector<int64_t> out;
      YAML::Node n = it->second[key];
      if (!n)
        return out;
      if (!n.IsSequence() || n.size() < 1 || n.size() > kiln::tile::kMaxLayoutRank)
        throw Reject{posOf(n), std::string(key) + " of '" + req.op.name +
                                   "' must list one count per tile dim, like [4, 8]"};
      if (!req.lanes.empty() && n.size() != req.lanes.size())
        throw Reject{posOf(n), std::string(key) + " of '" + req.op.name + "' has " +
                                   std::to_string(n.size()) + " entries but its lanes have " +
                                   std::to_string(req.lanes.size())};
      int64_t product = 1;
      for (const YAML::Node &x : n) {
        int64_t v = integer(x, std::string(key) + " entry", 1, most);
        if (v & (v - 1))
          throw Reject{posOf(x), std::string(key) + " entries must be powers of two, got " +
                                     std::to_string(v)};
        out.push_back(v);
        product *= v;
      }
      if (product > most)
        throw Reject{posOf(n), std::string(key) + " of '" + req.op.name + "' take " +
                                   std::to_string(product) + " " + bound};
      return out;
    };
    required(it->second, "lanes", of);
    req.lanes = list("lanes", 32, "lanes; a warp has 32");
    req.size = list("size", 1 << 10, "elements; a thread holds at most 1024 of a tile");
    req.warps = list("warps", s.warps, "warps; the CTA has " + std::to_string(s.warps));
    s.layouts.push_back(req);
  }
}

} // namespace

bool kiln::loadSchedule(const std::string &path, Schedule &out, llvm::raw_ostream &errs) noexcept {
  out.path = path;
  std::string error;
  if (!readFile(path, out.text, error)) {
    errs << "kiln: error: " << error << "\n";
    return false;
  }
  return readYaml(
      out.text, "schedule", [&](const YAML::Node &root) { parse(root, out); },
      [&](SrcPos pos, const std::string &message) { return out.diag(pos, message); }, errs);
}
