//===- YamlRead.cpp - what every YAML reader of Kiln shares ---------------===//
#include "dsl/schedule/YamlRead.h"

using namespace kiln;
using namespace kiln::yamlread;

SrcPos kiln::yamlread::posOf(const YAML::Node &n) {
  return {(unsigned)n.Mark().line + 1, (unsigned)n.Mark().column + 1};
}

std::string kiln::yamlread::scalar(const YAML::Node &n, const std::string &what) {
  if (!n.IsScalar())
    throw Reject{posOf(n), what + " must be a single value"};
  return n.Scalar();
}

void kiln::yamlread::onlyKeys(const YAML::Node &map, const std::set<std::string> &allowed,
                              const std::string &where) {
  if (!map.IsMap())
    throw Reject{posOf(map), where + " must be a mapping"};
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = it->first.Scalar();
    if (!allowed.count(key)) {
      std::string list;
      for (const std::string &k : allowed)
        list += (list.empty() ? "" : ", ") + k;
      throw Reject{posOf(it->first),
                   "unknown key '" + key + "' in " + where + " (expected one of: " + list + ")"};
    }
  }
}

void kiln::yamlread::rejectRepeatedKeys(const YAML::Node &n) {
  if (n.IsSequence()) {
    for (const YAML::Node &item : n)
      rejectRepeatedKeys(item);
    return;
  }
  if (!n.IsMap())
    return;
  std::map<std::string, SrcPos> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node key = it->first; // a copy: `it->` makes a temporary
    std::string name = key.IsScalar() ? key.Scalar() : "";
    if (!name.empty()) {
      auto [first, fresh] = seen.emplace(name, posOf(key));
      if (!fresh)
        throw Reject{posOf(key), "key '" + name +
                                     "' is written twice in this mapping (first at line " +
                                     std::to_string(first->second.line) + ")"};
    }
    rejectRepeatedKeys(it->second);
  }
}
