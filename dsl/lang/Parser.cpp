//===- Parser.cpp - lexer and recursive-descent parser --------------------===//
#include "dsl/lang/Parser.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>

using namespace kiln;
using namespace kiln::lang;

namespace {

struct Token {
  enum Kind { End, Ident, Int, Float, String, Punct } kind = End;
  std::string text;
  SrcPos pos;
};

class Lexer {
public:
  explicit Lexer(const std::string &text) : text(text) {}

  bool run(std::vector<Token> &tokens, Error &error) {
    while (true) {
      skipSpaceAndComments();
      Token t;
      t.pos = {line, col};
      if (i >= text.size()) {
        tokens.push_back(t);
        return true;
      }
      char c = text[i];
      if (std::isalpha((unsigned char)c) || c == '_') {
        t.kind = Token::Ident;
        while (i < text.size() && (std::isalnum((unsigned char)text[i]) || text[i] == '_'))
          t.text += advance();
      } else if (std::isdigit((unsigned char)c) ||
                 (c == '.' && i + 1 < text.size() && std::isdigit((unsigned char)text[i + 1]))) {
        t.kind = Token::Int;
        while (i < text.size() && (std::isalnum((unsigned char)text[i]) || text[i] == '.' ||
                                   ((text[i] == '-' || text[i] == '+') &&
                                    (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
          if (text[i] == '.' && i + 1 < text.size() && text[i + 1] == '.')
            break; // `0..n` is a range
          if (text[i] == '.' || text[i] == 'e' || text[i] == 'E')
            t.kind = Token::Float;
          t.text += advance();
        }
        char *end = nullptr;
        errno = 0;
        if (t.kind == Token::Int)
          std::strtoll(t.text.c_str(), &end, 10);
        else
          std::strtod(t.text.c_str(), &end);
        if (*end) {
          error = {t.pos, "malformed number '" + t.text + "'"};
          return false;
        }
        // (strtoll clamps to the largest; the parser reads Int tokens as is.)
        if (t.kind == Token::Int && errno == ERANGE) {
          error = {t.pos, "the integer " + t.text + " does not fit in 64 bits"};
          return false;
        }
      } else if (c == '"') {
        t.kind = Token::String;
        advance();
        while (i < text.size() && text[i] != '"' && text[i] != '\n')
          t.text += advance();
        if (i >= text.size() || text[i] != '"') {
          error = {t.pos, "unterminated string"};
          return false;
        }
        advance();
      } else {
        t.kind = Token::Punct;
        static const char *multi[] = {"+:", "..", "==", "!=", "<=", ">=", "&&", "||", "->"};
        for (const char *m : multi)
          if (text.compare(i, 2, m) == 0) {
            t.text = m;
            break;
          }
        if (t.text.empty()) {
          if (!std::strchr("()[]{},;:=+-*/%<>!.@", c)) {
            error = {t.pos, std::string("unexpected character '") + c + "'"};
            return false;
          }
          t.text = std::string(1, c);
        }
        for (size_t k = 0; k < t.text.size(); ++k)
          advance();
      }
      tokens.push_back(t);
    }
  }

private:
  const std::string &text;
  size_t i = 0;
  unsigned line = 1, col = 1;

  char advance() {
    char c = text[i++];
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    return c;
  }
  void skipSpaceAndComments() {
    while (i < text.size()) {
      if (std::isspace((unsigned char)text[i]))
        advance();
      else if (text.compare(i, 2, "//") == 0 || text[i] == '#')
        while (i < text.size() && text[i] != '\n')
          advance();
      else
        break;
    }
  }
};

static const std::set<std::string> kKeywords = {
    "const", "param", "fn",      "kernel", "op", "scratch", "grid",  "let",  "var", "for",  "in",
    "if",    "else",  "require", "return", "as", "true",    "false", "None", "out", "inout"};

class Parser {
public:
  Parser(std::vector<Token> tokens, Error &error) : toks(std::move(tokens)), error(error) {}

  std::optional<Program> program() {
    Program p;
    while (!at(Token::End)) {
      if (isWord("const")) {
        Const c;
        c.pos = next().pos;
        if (!ident(c.name, "constant name") || !expect(":") || !ident(c.type, "type"))
          return std::nullopt;
        if (c.type != "int" && c.type != "bool" && c.type != "float" && c.type != "dtype")
          return fail(prev().pos, "constants are int, bool, float or dtype, not '" + c.type + "'");
        if (!expect("=") || !(c.value = expr()) || !expect(";"))
          return std::nullopt;
        p.consts.push_back(std::move(c));
      } else if (isWord("param")) {
        SchedParam s;
        s.pos = next().pos;
        std::string type;
        if (!ident(s.name, "parameter name") || !expect(":") || !ident(type, "type"))
          return std::nullopt;
        if (type != "int" && type != "dtype")
          return fail(prev().pos, "schedule parameters are int or dtype, not '" + type + "'");
        s.type = type;
        if (isPunct("=")) {
          next();
          if (!(s.fallback = expr()))
            return std::nullopt;
        }
        if (!expect(";"))
          return std::nullopt;
        p.schedParams.push_back(std::move(s));
      } else if (isWord("fn")) {
        Function f;
        f.pos = next().pos;
        if (!ident(f.name, "function name") || !expect("("))
          return std::nullopt;
        while (!isPunct(")")) {
          std::string name;
          SrcPos pos = cur().pos;
          if (!ident(name, "parameter name"))
            return std::nullopt;
          f.params.push_back({name, pos});
          if (!isPunct(")") && !expect(","))
            return std::nullopt;
        }
        next();
        if (!block(f.body))
          return std::nullopt;
        p.functions.push_back(std::move(f));
      } else if (isWord("require")) {
        StmtP r = stmt();
        if (!r)
          return std::nullopt;
        p.requires.push_back(std::move(r));
      } else if (isWord("check")) {
        CheckShape c;
        c.pos = next().pos;
        do {
          std::string dim;
          if (!c.dims.empty())
            next(); // ','
          SrcPos dimPos = cur().pos;
          if (!ident(dim, "a dim name") || !expect("="))
            return std::nullopt;
          if (!at(Token::Int))
            return fail(cur().pos, "expected a positive integer for dim '" + dim + "'");
          int64_t n = std::strtoll(next().text.c_str(), nullptr, 10);
          if (n <= 0)
            return fail(prev().pos, "dims must be positive");
          for (auto &[d, v] : c.dims)
            if (d == dim)
              return fail(dimPos, "dim '" + dim + "' is given twice");
          c.dims.push_back({dim, n});
        } while (isPunct(","));
        if (!expect(";"))
          return std::nullopt;
        p.checks.push_back(std::move(c));
      } else if (isWord("kernel")) {
        Kernel k;
        if (!kernel(k))
          return std::nullopt;
        p.kernels.push_back(std::move(k));
      } else if (isWord("op")) {
        OpDecl o;
        if (!opDecl(o))
          return std::nullopt;
        p.ops.push_back(std::move(o));
      } else {
        return fail(
            cur().pos,
            "expected 'const', 'param', 'require', 'check', 'fn', 'kernel' or 'op', found " +
                describe(cur()));
      }
    }
    if (p.kernels.empty())
      return fail(cur().pos, "the source defines no kernel");
    return p;
  }

private:
  std::vector<Token> toks;
  size_t k = 0;
  Error &error;
  bool failed = false;
  // How deep expressions and blocks nest here: each level recurses in the
  // parser, the emitter and the tree's destructors, so a source of 200000
  // nested parentheses overflowed the stack. Far past what a kernel needs.
  static constexpr int kMaxDepth = 1000;
  int depth = 0;
  struct Nesting {
    Parser &p;
    explicit Nesting(Parser &p) : p(p) { ++p.depth; }
    ~Nesting() { --p.depth; }
  };
  bool tooDeep() {
    if (depth <= kMaxDepth)
      return false;
    fail(cur().pos,
         "expressions and blocks nest deeper than " + std::to_string(kMaxDepth) + " levels here");
    return true;
  }

  const Token &cur() const { return toks[k]; }
  const Token &prev() const { return toks[k ? k - 1 : 0]; }
  const Token &next() { return toks[k < toks.size() - 1 ? k++ : k]; }
  bool at(Token::Kind kind) const { return cur().kind == kind; }
  bool isPunct(const char *p) const { return cur().kind == Token::Punct && cur().text == p; }
  bool isWord(const char *w) const { return cur().kind == Token::Ident && cur().text == w; }
  bool isPunctAt(size_t ahead, const char *p) const {
    size_t j = std::min(k + ahead, toks.size() - 1);
    return toks[j].kind == Token::Punct && toks[j].text == p;
  }

  static std::string describe(const Token &t) {
    switch (t.kind) {
    case Token::End:
      return "end of file";
    case Token::String:
      return "string \"" + t.text + "\"";
    default:
      return "'" + t.text + "'";
    }
  }
  std::nullopt_t fail(SrcPos pos, std::string message) {
    if (!failed)
      error = {pos, std::move(message)};
    failed = true;
    return std::nullopt;
  }
  bool expect(const char *p) {
    if (isPunct(p)) {
      next();
      return true;
    }
    fail(cur().pos, std::string("expected '") + p + "', found " + describe(cur()));
    return false;
  }
  bool ident(std::string &out, const char *what) {
    if (!at(Token::Ident) || kKeywords.count(cur().text)) {
      fail(cur().pos, std::string("expected ") + what + ", found " + describe(cur()));
      return false;
    }
    out = next().text;
    return true;
  }

  /// `NAME: DTYPE[dims]` after the name's position; `access` given for
  /// scratch tensors, read (in / out / inout) for parameters.
  bool viewDims(Param &p) {
    if (!expect("["))
      return false;
    while (!isPunct("]")) {
      Dim d;
      d.pos = cur().pos;
      if (at(Token::Int)) {
        d.value = std::strtoll(next().text.c_str(), nullptr, 10);
        if (d.value <= 0)
          return fail(d.pos, "dims must be positive"), false;
      } else if (!ident(d.name, "dim (an integer or a name)")) {
        return false;
      } else if (isPunct("+")) {
        // `N + 1`: a dim one more than another (e.g. cu_seqlens).
        next();
        if (!at(Token::Int))
          return fail(cur().pos, "expected an integer after '+' in a dim"), false;
        int64_t plus = std::strtoll(next().text.c_str(), nullptr, 10);
        if (plus <= 0)
          return fail(d.pos, "a dim offset must be positive"), false;
        d.name += "+" + std::to_string(plus);
      }
      p.dims.push_back(d);
      if (!isPunct("]") && !expect(","))
        return false;
    }
    next();
    if (p.dims.empty())
      return fail(p.pos, "a view needs at least one dim"), false;
    return true;
  }

  /// A `range` bound: `-1`, `0`, `N`.
  bool bound(Bound &out) {
    out.pos = cur().pos;
    bool negative = isPunct("-");
    if (negative)
      next();
    if (at(Token::Int)) {
      out.value = std::strtoll(next().text.c_str(), nullptr, 10) * (negative ? -1 : 1);
      return true;
    }
    if (negative)
      return fail(cur().pos, "expected an integer after '-' in a range"), false;
    return ident(out.name, "a range bound (an integer, a const or a dim)");
  }

  /// What `kiln run` needs to check a parameter, after its type, in any
  /// order: `tolerance 2e-2` (an output's relative error against the
  /// float64 reference), `range 0..N` (the integers drawn for an input),
  /// `offsets T` (the input is a packed batch's offsets into T tokens).
  bool checkAnnotations(Param &p) {
    while (true) {
      if (isWord("tolerance")) {
        p.tolerancePos = next().pos;
        if (!at(Token::Float) && !at(Token::Int))
          return fail(cur().pos, "expected a number after 'tolerance'"), false;
        p.tolerance = std::strtod(next().text.c_str(), nullptr);
        if (!(p.tolerance > 0))
          return fail(p.tolerancePos, "a tolerance must be positive"), false;
      } else if (isWord("range")) {
        next();
        p.hasRange = true;
        if (!bound(p.rangeLo) || !expect("..") || !bound(p.rangeHi))
          return false;
      } else if (isWord("offsets")) {
        p.offsetsPos = next().pos;
        if (!ident(p.offsetsOf, "the dim the offsets count into (offsets T)"))
          return false;
      } else {
        return true;
      }
    }
  }

  /// `(name: in bf16[T, K], x: f32, ...)`, the opening '(' already read.
  bool paramList(std::vector<Param> &out) {
    while (!isPunct(")")) {
      Param p;
      p.pos = cur().pos;
      if (!ident(p.name, "parameter name") || !expect(":"))
        return false;
      if (isWord("in") || isWord("out") || isWord("inout"))
        p.access = next().text;
      if (!ident(p.dtype, "element type"))
        return false;
      if (p.isView()) {
        if (!viewDims(p))
          return false;
      } else if (isPunct("[")) {
        return fail(cur().pos, "a tensor parameter needs an access mode: in, out or inout"), false;
      }
      if (!checkAnnotations(p))
        return false;
      out.push_back(std::move(p));
      if (!isPunct(")") && !expect(","))
        return false;
    }
    next();
    return true;
  }

  bool opDecl(OpDecl &o) {
    o.pos = next().pos;
    if (!ident(o.name, "op name") || !expect("(") || !paramList(o.params) || !expect("{"))
      return false;
    while (!isPunct("}")) {
      if (at(Token::End))
        return fail(cur().pos, "expected '}' before end of file"), false;
      if (isWord("dim")) {
        AlignedDim d;
        next();
        d.pos = cur().pos;
        if (!ident(d.name, "dim name") || !expect("="))
          return false;
        if (!isWord("align"))
          return fail(cur().pos, "a derived dim is 'align(DIM, MULTIPLE)'"), false;
        next();
        if (!expect("("))
          return false;
        d.ofPos = cur().pos;
        if (!ident(d.of, "the dim to align") || !expect(","))
          return false;
        d.multiple.pos = cur().pos;
        if (at(Token::Int))
          d.multiple.value = std::strtoll(next().text.c_str(), nullptr, 10);
        else if (!ident(d.multiple.name, "a multiple (an integer, const or param)"))
          return false;
        if (!expect(")") || !expect(";"))
          return false;
        o.alignedDims.push_back(std::move(d));
        continue;
      }
      if (isWord("scratch")) {
        Param p;
        next();
        p.pos = cur().pos;
        p.access = "scratch";
        if (!ident(p.name, "scratch tensor name") || !expect(":") ||
            !ident(p.dtype, "element type") || !viewDims(p) || !expect(";"))
          return false;
        o.scratch.push_back(std::move(p));
        continue;
      }
      Launch l;
      l.pos = cur().pos;
      if (!ident(l.kernel, "'scratch' or a kernel to launch") || !expect("("))
        return false;
      while (!isPunct(")")) {
        std::string name;
        SrcPos pos = cur().pos;
        if (!ident(name, "an argument (a parameter or scratch tensor of the op)"))
          return false;
        l.args.push_back({name, pos});
        if (!isPunct(")") && !expect(","))
          return false;
      }
      next();
      if (!expect(";"))
        return false;
      o.launches.push_back(std::move(l));
    }
    next();
    if (o.launches.empty())
      return fail(o.pos, "op '" + o.name + "' launches no kernel"), false;
    return true;
  }

  bool kernel(Kernel &kern) {
    kern.pos = next().pos;
    if (!ident(kern.name, "kernel name") || !expect("(") || !paramList(kern.params))
      return false;
    if (!isWord("grid"))
      return fail(cur().pos, "expected 'grid (...)' after the kernel parameters"), false;
    next();
    if (!expect("("))
      return false;
    while (!isPunct(")")) {
      GridAxis a;
      a.pos = cur().pos;
      if (!ident(a.name, "grid axis name") || !expect(":") || !(a.extent = expr()))
        return false;
      kern.grid.push_back(std::move(a));
      if (!isPunct(")") && !expect(","))
        return false;
    }
    next();
    return block(kern.body);
  }

  bool block(StmtList &out) {
    Nesting nest(*this);
    if (tooDeep() || !expect("{"))
      return false;
    while (!isPunct("}")) {
      if (at(Token::End))
        return fail(cur().pos, "expected '}' before end of file"), false;
      StmtP s = stmt();
      if (!s)
        return false;
      out.push_back(std::move(s));
    }
    next();
    return true;
  }

  StmtP stmt() {
    auto s = std::make_unique<Stmt>();
    s->pos = cur().pos;
    if (isWord("let") || isWord("var")) {
      s->kind = next().text == "let" ? Stmt::Let : Stmt::Var;
      if (!ident(s->name, "variable name") || !expect("=") || !(s->value = expr()) || !expect(";"))
        return nullptr;
    } else if (isWord("for")) {
      next();
      s->kind = Stmt::For;
      if (!ident(s->name, "loop variable"))
        return nullptr;
      if (!isWord("in"))
        return fail(cur().pos, "expected 'in' after the loop variable"), nullptr;
      next();
      if (!(s->value = expr()) || !expect("..") || !(s->upper = expr()) || !block(s->body))
        return nullptr;
    } else if (isWord("if")) {
      return ifStmt();
    } else if (isWord("require")) {
      next();
      s->kind = Stmt::Require;
      if (!(s->value = expr()))
        return nullptr;
      if (isPunct(",")) {
        next();
        if (!at(Token::String))
          return fail(cur().pos, "expected a message string"), nullptr;
        s->message = next().text;
      }
      if (!expect(";"))
        return nullptr;
    } else if (isWord("return")) {
      next();
      s->kind = Stmt::Return;
      if (!(s->value = expr()) || !expect(";"))
        return nullptr;
    } else if (at(Token::Ident) && isPunctAt(1, "=")) {
      s->kind = Stmt::Assign;
      s->name = next().text;
      next();
      if (!(s->value = expr()) || !expect(";"))
        return nullptr;
    } else {
      s->kind = Stmt::ExprStmt;
      if (!(s->value = expr()) || !expect(";"))
        return nullptr;
    }
    return s;
  }

  StmtP ifStmt() {
    auto s = std::make_unique<Stmt>();
    s->pos = next().pos;
    s->kind = Stmt::If;
    if (!(s->value = expr()) || !block(s->body))
      return nullptr;
    if (isWord("else")) {
      next();
      if (isWord("if")) {
        StmtP nested = ifStmt();
        if (!nested)
          return nullptr;
        s->orElse.push_back(std::move(nested));
      } else if (!block(s->orElse)) {
        return nullptr;
      }
    }
    return s;
  }

  // Precedence climbing: || && (== !=) (< <= > >=) (+ -) (* / %) unary postfix.
  ExprP expr() {
    Nesting nest(*this);
    return tooDeep() ? nullptr : binary(0);
  }

  static int precedence(const std::string &op) {
    if (op == "||")
      return 1;
    if (op == "&&")
      return 2;
    if (op == "==" || op == "!=")
      return 3;
    if (op == "<" || op == "<=" || op == ">" || op == ">=")
      return 4;
    if (op == "+" || op == "-")
      return 5;
    if (op == "*" || op == "/" || op == "%")
      return 6;
    return 0;
  }

  ExprP binary(int minPrec) {
    ExprP lhs = unary();
    while (lhs && at(Token::Punct)) {
      int prec = precedence(cur().text);
      if (!prec || prec <= minPrec)
        break;
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Binary;
      e->pos = cur().pos;
      e->name = next().text;
      ExprP rhs = binary(prec);
      if (!rhs)
        return nullptr;
      e->operands.push_back(std::move(lhs));
      e->operands.push_back(std::move(rhs));
      lhs = std::move(e);
    }
    return lhs;
  }

  ExprP unary() {
    Nesting nest(*this);
    if (tooDeep())
      return nullptr;
    if (isPunct("-") || isPunct("!")) {
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Unary;
      e->pos = cur().pos;
      e->name = next().text;
      ExprP operand = unary();
      if (!operand)
        return nullptr;
      e->operands.push_back(std::move(operand));
      return e;
    }
    return postfix();
  }

  ExprP postfix() {
    ExprP e = primary();
    while (e) {
      if (isPunct("[")) {
        auto ix = std::make_unique<Expr>();
        ix->kind = Expr::Index;
        ix->pos = next().pos;
        while (!isPunct("]")) {
          IndexItem item;
          item.pos = cur().pos;
          if (isPunct(":")) {
            next();
            item.kind = IndexItem::Full;
          } else if (isWord("None")) {
            next();
            item.kind = IndexItem::NewAxis;
          } else {
            if (!(item.start = expr()))
              return nullptr;
            if (isPunct("+:") || isPunct("..")) {
              item.kind = isPunct("+:") ? IndexItem::Range : IndexItem::Bounds;
              next();
              if (!(item.size = expr()))
                return nullptr;
            }
          }
          ix->items.push_back(std::move(item));
          if (!isPunct("]") && !expect(","))
            return nullptr;
        }
        next();
        ix->operands.push_back(std::move(e));
        e = std::move(ix);
      } else if (isWord("as")) {
        auto c = std::make_unique<Expr>();
        c->kind = Expr::Cast;
        c->pos = next().pos;
        if (!ident(c->name, "element type after 'as'"))
          return nullptr;
        c->operands.push_back(std::move(e));
        e = std::move(c);
      } else if (isPunct(".")) {
        auto t = std::make_unique<Expr>();
        t->pos = next().pos;
        if (!isWord("T"))
          return fail(cur().pos,
                      "expected 'T' after '.' (the only attribute is the transpose x.T)"),
                 nullptr;
        next();
        t->kind = Expr::Transpose;
        t->operands.push_back(std::move(e));
        e = std::move(t);
      } else {
        break;
      }
    }
    return e;
  }

  ExprP primary() {
    auto e = std::make_unique<Expr>();
    e->pos = cur().pos;
    if (at(Token::Int)) {
      e->kind = Expr::Int;
      e->intValue = std::strtoll(next().text.c_str(), nullptr, 10);
      return e;
    }
    if (at(Token::Float)) {
      e->kind = Expr::Float;
      e->floatValue = std::strtod(next().text.c_str(), nullptr);
      return e;
    }
    if (isWord("true") || isWord("false")) {
      e->kind = Expr::Bool;
      e->intValue = next().text == "true";
      return e;
    }
    if (isPunct("(")) {
      next();
      ExprP inner = expr();
      if (!inner || !expect(")"))
        return nullptr;
      return inner;
    }
    if (isWord("if")) {
      next();
      e->kind = Expr::IfElse;
      ExprP cond, a, b;
      if (!(cond = expr()) || !expect("{") || !(a = expr()) || !expect("}"))
        return nullptr;
      if (!isWord("else"))
        return fail(cur().pos, "an 'if' expression needs an 'else' branch"), nullptr;
      next();
      if (!expect("{") || !(b = expr()) || !expect("}"))
        return nullptr;
      e->operands.push_back(std::move(cond));
      e->operands.push_back(std::move(a));
      e->operands.push_back(std::move(b));
      return e;
    }
    if (at(Token::Ident) && !kKeywords.count(cur().text)) {
      e->name = next().text;
      if (!isPunct("(")) {
        e->kind = Expr::Name;
        return e;
      }
      next();
      e->kind = Expr::Call;
      while (!isPunct(")")) {
        Arg arg;
        if (at(Token::Ident) && isPunctAt(1, "=") && !isPunctAt(2, "=")) {
          arg.keyword = next().text;
          next();
        }
        if (!(arg.value = expr()))
          return nullptr;
        e->args.push_back(std::move(arg));
        if (!isPunct(")") && !expect(","))
          return nullptr;
      }
      next();
      return e;
    }
    if (isPunct("[")) {
      // A shape list like [BV, K] for zeros / full / reshape / broadcast.
      next();
      e->kind = Expr::Call;
      e->name = "[]";
      while (!isPunct("]")) {
        Arg arg;
        if (!(arg.value = expr()))
          return nullptr;
        e->args.push_back(std::move(arg));
        if (!isPunct("]") && !expect(","))
          return nullptr;
      }
      next();
      return e;
    }
    return fail(cur().pos, "expected an expression, found " + describe(cur())), nullptr;
  }
};

} // namespace

std::optional<Program> kiln::lang::parseProgram(const std::string &text, Error &error) {
  std::vector<Token> tokens;
  if (!Lexer(text).run(tokens, error))
    return std::nullopt;
  return Parser(std::move(tokens), error).program();
}
