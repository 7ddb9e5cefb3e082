// mcrouter's preprocessor (JSONM) against mcrouter's own test files
// (tests/unit/config/jsonm/, copied from mcrouter, MIT), every case run as
// mcrouter's config_preprocessor_test.cpp runs it: consts + macros + orig
// expanded and compared with expand (keys sorted); every case of the errors
// file must fail; the comments file's orig and expand must agree. Then the
// lines an expansion keeps, and ithaca's bounds.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "jsonm_preprocessor.h"
#include "jsonm_value.h"

// A namespace of its own: the using-directive stays out of the other test
// files of a unity chunk.
namespace jsonm_test {

using namespace ithaca::config::jsonm;

namespace {

std::string jsonm_test_read(const std::string& name) {
  const std::string path = std::string(ITHACA_JSONM_TEST_DIR) + "/" + name;
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// mcrouter's MockImportResolver and kGlobalParams.
options jsonm_test_options() {
  options o;
  o.globals["testGlobal"] = value::string("test");
  o.globals["templGlobal"] = value::string("templ");
  o.import = [](const std::string& path) -> std::string {
    if (path == "test") return "\"mock_test\"";
    if (path == "templ") return "{ \"type\": \"macroDef\", \"result\": \"imported_macro\" }";
    if (path == "do_not_exist") throw std::runtime_error("Can not import" + path);
    return "";
  };
  return o;
}

std::string jsonm_expand_case(const value& consts, const value& macros, const value& orig) {
  value obj = value::object();
  obj.set("consts", consts);
  obj.set("macros", macros);
  obj.set("orig", orig);
  const value result = expand_config(to_json(obj, false), jsonm_test_options());
  const value* out = result.find("orig");
  REQUIRE(out != nullptr);
  return to_json(*out, false);
}

}  // namespace

TEST_CASE("jsonm: every case of mcrouter's config_preprocessor_test_file.json") {
  const value tests = parse(jsonm_test_read("config_preprocessor_test_file.json"));
  size_t cases = 0;
  for (const member& test : tests.members) {
    const value* macros = test.val.find("macros");
    REQUIRE_MESSAGE(macros != nullptr, test.key);
    const value* consts_p = test.val.find("consts");
    const value consts = consts_p ? *consts_p : value::array();
    for (const member& c : test.val.find("cases")->members) {
      const std::string name = test.key + ":" + c.key;
      ++cases;
      std::string got;
      try {
        got = jsonm_expand_case(consts, *macros, *c.val.find("orig"));
      } catch (const error& e) {
        got = std::string("error: ") + e.what();
      }
      CHECK_MESSAGE(got == to_json(*c.val.find("expand"), false), name);
    }
  }
  CHECK(cases == 157);
}

TEST_CASE("jsonm: every case of mcrouter's config_preprocessor_test_errors.json fails") {
  const value tests = parse(jsonm_test_read("config_preprocessor_test_errors.json"));
  CHECK(tests.members.size() == 25);
  for (const member& c : tests.members) {
    bool failed = false;
    try {
      expand_config(to_json(c.val, false), jsonm_test_options());
    } catch (const error& e) {
      failed = true;
      MESSAGE(c.key << ": " << std::string(e.what()));
    }
    CHECK_MESSAGE(failed, c.key);
  }
}

TEST_CASE("jsonm: mcrouter's config_preprocessor_test_comments.json") {
  const value v = expand_config(jsonm_test_read("config_preprocessor_test_comments.json"), jsonm_test_options());
  REQUIRE(v.find("orig") != nullptr);
  CHECK(to_json(*v.find("orig"), false) == to_json(*v.find("expand"), false));
  CHECK(to_json(*v.find("orig"), false) == R"({"comm":"/**/ //\"////","str":"//\""})");
}

TEST_CASE("jsonm: objectKeyMutationStress (4096 keys through transform, foreach and merge)") {
  value dict = value::object();
  for (int k = 0; k < 4096; ++k) dict.set("key" + std::to_string(k), value::string("value" + std::to_string(k)));
  value transformed = value::object();
  transformed.set("type", value::string("transform"));
  transformed.set("dictionary", dict);
  transformed.set("keyTransform", value::string("%key%"));
  transformed.set("itemTransform", value::string("%item%"));
  value source = value::object();
  source.set("source", value::string("%item%"));
  value key = value::object();
  key.set("key", value::string("%key%"));
  value params = value::array();
  params.items = {source, key};
  value merge = value::object();
  merge.set("type", value::string("merge"));
  merge.set("params", params);
  value use = value::object();
  use.set("%key%", merge);
  value orig = value::object();
  orig.set("type", value::string("foreach"));
  orig.set("from", transformed);
  orig.set("use", use);
  value obj = value::object();
  obj.set("consts", value::array());
  obj.set("macros", value::object());
  obj.set("orig", orig);
  const value result = expand_config(to_json(obj, false), jsonm_test_options());
  const value& out = *result.find("orig");
  REQUIRE(out.is_object());
  CHECK(out.size() == 4096);
  CHECK(out.find("key17")->find("source")->s == "value17");
  CHECK(out.find("key17")->find("key")->s == "key17");
  CHECK(out.find("key4095")->find("source")->s == "value4095");
}

TEST_CASE("jsonm: an expanded value keeps the line it came from") {
  const std::string text =
      "{\n"                                                            // 1
      "  \"macros\": {\n"                                              // 2
      "    \"pool\": {\"type\": \"macroDef\", \"params\": [\"n\"],\n"  // 3
      "      \"result\": {\"type\": \"PoolRoute\",\n"                  // 4
      "                 \"pool\": \"%n%\"}}\n"                         // 5
      "  },\n"                                                         // 6
      "  \"route\": \"@pool(A)\",\n"                                   // 7
      "  \"other\": [1, \"@int(2)\"]\n"                                // 8
      "}\n";
  const value v = expand_config(text, options{});
  const value& route = *v.find("route");
  CHECK(route.line == 7);                // the call site (mcrouter's metadata)
  CHECK(route.find("type")->line == 4);  // inside the macro: its definition
  CHECK(route.find("pool")->line == 5);
  CHECK(route.find("pool")->s == "A");
  CHECK(v.find("other")->items[1].line == 8);
  CHECK(v.find("other")->items[1].i == 2);
}

TEST_CASE("jsonm: an error names the call and the line") {
  const std::string text =
      "{\n"
      "  \"macros\": {\n"
      "    \"d\": {\"type\": \"constDef\", \"result\": {\"a\": 1}},\n"
      "    \"pick\": {\"type\": \"macroDef\", \"params\": [\"k\"],\n"
      "      \"result\": \"@select(%d%, %k%)\"}\n"
      "  },\n"
      "  \"route\": \"@pick(b)\"\n"
      "}\n";
  try {
    expand_config(text, options{});
    FAIL("no error");
  } catch (const error& e) {
    const std::string what = e.what();
    MESSAGE(what);
    CHECK(e.line == 5);  // the innermost value: the macro's body; the call is named with its line
    CHECK(what.find("Raw object property 'route'") != std::string::npos);
    CHECK(what.find("Macro in string 'pick' (line 7)") != std::string::npos);
    CHECK(what.find("Select: 'b' not found, default not specified") != std::string::npos);
  }
}

TEST_CASE("jsonm: parse errors and bounds") {
  CHECK_THROWS_AS(parse("{\n\"a\": 1,\n\"a\": 2}"), error);
  try {
    parse("{\n\"a\": [1,\n 2 3]}");
    FAIL("no error");
  } catch (const error& e) {
    CHECK(e.line == 3);
  }
  CHECK(to_json(parse("{\"a\": [1, 2,], } /* never closed"), false) == R"({"a":[1,2]})");
  CHECK_THROWS_AS(expand_config(R"j({"a": "@range(@int(0), @int(100000000))"})j", options{}), error);
  CHECK_THROWS_AS(expand_config(R"({"macros": {"x": {"type": "macroDef", "result": "@x"}}, "a": "@x"})", options{}),
                  error);
}

TEST_CASE("jsonm: to_json_with_lines maps each printed line to its source line") {
  const value v = parse("{\n\"a\": 1,\n\n\"b\": [\n\"x\"\n]\n}");
  std::vector<int> lines;
  const std::string text = to_json_with_lines(v, lines);
  CHECK(text == "{\n  \"a\": 1,\n  \"b\": [\n    \"x\"\n  ]\n}");
  REQUIRE(lines.size() == 7);
  CHECK(lines[1] == 1);
  CHECK(lines[2] == 2);
  CHECK(lines[3] == 4);
  CHECK(lines[4] == 5);
  CHECK(lines[5] == 4);
  CHECK(lines[6] == 1);
}

}  // namespace jsonm_test
