#include "model_test_util.h"

#include "kiln/model/metrics.h"
#include "kiln/model/xgboost_model.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

using namespace kiln;

namespace {

/// Train and held-out sets, built once: lowering a few hundred configs is
/// the slow part of these tests.
struct Data {
  test::SyntheticSet train_a, test_a, train_b, test_b;
  std::vector<model::Sample> train, held_out;
};

const Data& data() {
  static const Data d = [] {
    Data d;
    d.train_a = test::synthetic_set(64, 64, 64, 240, 1);
    d.test_a = test::synthetic_set(64, 64, 64, 120, 2);
    d.train_b = test::synthetic_set(128, 32, 64, 240, 3);
    d.test_b = test::synthetic_set(128, 32, 64, 120, 4);
    for (const auto* s : {&d.train_a, &d.train_b})
      d.train.insert(d.train.end(), s->samples.begin(), s->samples.end());
    // Held-out programs that also occur in the training set would flatter
    // the model: leave them out.
    for (const auto* s : {&d.test_a, &d.test_b})
      for (const model::Sample& x : s->samples) {
        bool seen = false;
        for (const model::Sample& y : d.train)
          seen = seen || (y.task == x.task && y.features.rows == x.features.rows);
        if (!seen)
          d.held_out.push_back(x);
      }
    return d;
  }();
  return d;
}

std::vector<model::ProgramFeatures> features_of(const std::vector<model::Sample>& samples) {
  std::vector<model::ProgramFeatures> out;
  for (const auto& s : samples)
    out.push_back(s.features);
  return out;
}

std::vector<model::Scored> scored(const std::vector<model::Sample>& samples,
                                  const std::vector<double>& scores) {
  std::vector<model::Scored> out;
  for (size_t i = 0; i < samples.size(); ++i)
    out.push_back({samples[i].task, scores[i], samples[i].label});
  return out;
}

/// A model trained once on the synthetic set, shared by the tests that only
/// read it.
model::XGBoostModel& trained_model() {
  static model::XGBoostModel m = [] {
    model::XGBoostModel m;
    m.set_target("x86_64-linux-gnu znver4");
    m.train(data().train);
    return m;
  }();
  return m;
}

/// A model trained on task A alone, kept as a prior.
model::XGBoostModel prior_of_task_a() {
  model::XGBoostModel m;
  m.train(data().train_a.samples);
  m.keep_as_prior();
  return m;
}

/// Task B's held-out programs.
std::vector<model::Sample> held_out_of_task_b() {
  std::vector<model::Sample> held_b;
  for (const model::Sample& x : data().held_out)
    if (x.task == data().train_b.samples.front().task)
      held_b.push_back(x);
  return held_b;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_model_test_" + name)).string();
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// The same FNV-1a as the model file's checksum, to forge files whose damage
/// only XGBoost can notice.
std::string fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

} // namespace

TEST_CASE("the learned model ranks held-out programs and beats random", "[model][xgboost]") {
  const Data& d = data();
  REQUIRE(d.train.size() == 480);
  REQUIRE(d.held_out.size() > 100);
  model::XGBoostModel& m = trained_model();
  REQUIRE(m.trained());
  REQUIRE(m.last_training().programs == 480);
  REQUIRE(m.last_training().rounds > 0);
  REQUIRE(m.training_samples() == 480);

  auto learned = scored(d.held_out, m.predict(features_of(d.held_out)));
  model::RandomModel random(7);
  auto guessed = scored(d.held_out, random.predict(features_of(d.held_out)));

  const double acc = model::pairwise_accuracy(learned);
  const double acc_random = model::pairwise_accuracy(guessed);
  const double top5 = model::top_k_score(learned, 5).mean;
  const double top5_random = model::top_k_score(guessed, 5).mean;
  WARN("held-out pairwise accuracy "
       << acc << " (random " << acc_random << "), top-5 " << top5 << " (random " << top5_random
       << "), " << m.last_training().rounds << " rounds, training loss " << m.last_training().loss);
  REQUIRE(acc > 0.85);
  REQUIRE(acc > acc_random + 0.25);
  REQUIRE(top5 > 0.9);
  REQUIRE(top5 >= top5_random);
}

TEST_CASE("the rank objective learns the order within each task", "[model][xgboost]") {
  // The synthetic labels of the two matmul tasks are on one scale here, but
  // the rank objective only ever compares programs of the same task: it must
  // still order the held-out programs, and better than chance by far.
  const Data& d = data();
  model::XGBoostParams p = model::offline_training_params();
  REQUIRE(p.objective == model::Objective::Rank);
  model::XGBoostModel m(p);
  m.train(d.train);
  REQUIRE(m.last_training().rounds > 0);
  REQUIRE(m.last_training().rounds_run <= p.max_rounds);
  auto learned = scored(d.held_out, m.predict(features_of(d.held_out)));
  const double acc = model::pairwise_accuracy(learned);
  WARN("rank objective: held-out pairwise accuracy " << acc << ", top-5 "
                                                     << model::top_k_score(learned, 5).mean);
  REQUIRE(acc > 0.8);
  REQUIRE(model::top_k_score(learned, 5).mean > 0.9);

  // The objective is part of the saved settings; unknown names are refused.
  const std::string path = temp_path("rank.model");
  REQUIRE_FALSE(m.save(path).has_value());
  auto loaded = model::XGBoostModel::load(path);
  REQUIRE(loaded.ok());
  REQUIRE(loaded->params() == m.params());
  REQUIRE(loaded->params().objective == model::Objective::Rank);
  std::remove(path.c_str());
  REQUIRE(model::objective_from_string("pack-sum") == model::Objective::PackSum);
  REQUIRE(model::objective_from_string("rank") == model::Objective::Rank);
  REQUIRE_FALSE(model::objective_from_string("ndcg").has_value());
}

TEST_CASE("training is deterministic", "[model][xgboost]") {
  const Data& d = data();
  std::vector<model::Sample> part(d.train.begin(), d.train.begin() + 120);
  model::XGBoostModel a, b;
  a.train(part);
  b.train(part);
  REQUIRE(a.predict(features_of(d.held_out)) == b.predict(features_of(d.held_out)));
}

TEST_CASE("the online settings rank as well with 32 histogram bins, kept through a save",
          "[model][xgboost]") {
  // kiln tune retrains from scratch every round with these settings; fewer
  // bins make that several times cheaper and must not cost ranking.
  const model::XGBoostParams online = model::online_training_params();
  REQUIRE(online.max_bin == 32);
  model::XGBoostModel m(online);
  m.train(data().train);
  auto learned = scored(data().held_out, m.predict(features_of(data().held_out)));
  CHECK(model::pairwise_accuracy(learned) > 0.85);
  CHECK(model::top_k_score(learned, 5).mean > 0.9);

  const std::string path = temp_path("online.model");
  REQUIRE_FALSE(m.save(path).has_value());
  auto loaded = model::XGBoostModel::load(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->params().max_bin == 32);
  std::remove(path.c_str());
}

TEST_CASE("save and load give the same predictions", "[model][xgboost]") {
  model::XGBoostModel& m = trained_model();
  const std::string path = temp_path("roundtrip.model");
  REQUIRE_FALSE(m.save(path).has_value());
  auto loaded = model::XGBoostModel::load(path);
  REQUIRE(loaded.ok());
  const auto programs = features_of(data().held_out);
  REQUIRE(loaded->predict(programs) == m.predict(programs));
  REQUIRE(loaded->target() == "x86_64-linux-gnu znver4");
  REQUIRE(loaded->training_samples() == 480);
  REQUIRE(loaded->params() == m.params());
  REQUIRE(loaded->rounds() == m.rounds());

  // The header is one JSON line that says what the model is.
  std::string text = read_all(path);
  auto header = nlohmann::json::parse(text.substr(0, text.find('\n')));
  REQUIRE(header["feature_version"] == model::kFeatureVersion);
  REQUIRE(header["feature_count"] == model::feature_count());
  REQUIRE(header["model_format"] == "ubj");
  REQUIRE(header["params"]["max_depth"] == 10);
  std::remove(path.c_str());
}

TEST_CASE("a model of another feature version is refused", "[model][xgboost][error]") {
  const std::string path = temp_path("version.model");
  REQUIRE_FALSE(trained_model().save(path).has_value());
  std::string text = read_all(path);
  const size_t nl = text.find('\n');
  auto header = nlohmann::json::parse(text.substr(0, nl));
  header["feature_version"] = model::kFeatureVersion + 1;
  write_all(path, header.dump() + text.substr(nl));
  auto loaded = model::XGBoostModel::load(path);
  REQUIRE_FALSE(loaded.ok());
  REQUIRE(loaded.error().id() == "model-feature-version");
  REQUIRE(loaded.error().message().find("retrain") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("missing and damaged model files are errors", "[model][xgboost][error]") {
  const std::string path = temp_path("damaged.model");
  std::remove(path.c_str());
  auto missing = model::XGBoostModel::load(path);
  REQUIRE_FALSE(missing.ok());
  REQUIRE(missing.error().id() == "model-unreadable");

  REQUIRE_FALSE(trained_model().save(path).has_value());
  const std::string good = read_all(path);
  const size_t nl = good.find('\n');

  SECTION("not a model at all") {
    write_all(path, "hello\nworld");
  }
  SECTION("empty") {
    write_all(path, "");
  }
  SECTION("truncated") {
    write_all(path, good.substr(0, good.size() / 2));
  }
  SECTION("flipped byte") {
    std::string bad = good;
    bad[nl + 1 + (bad.size() - nl) / 2] ^= 0x5a;
    write_all(path, bad);
  }
  SECTION("a damaged body whose header lacks the checksum") {
    // The bytes never reach XGBoost, whose loader aborts on some of them.
    std::string bad = good;
    bad[nl + 1 + (bad.size() - nl) / 2] ^= 0x5a;
    auto header = nlohmann::json::parse(good.substr(0, nl));
    header.erase("model_fnv1a64");
    write_all(path, header.dump() + "\n" + bad.substr(nl + 1));
  }
  SECTION("header numbers no field can hold") {
    // nlohmann converts 1e111 to an int with a plain cast (undefined
    // behaviour); the header's numbers are checked first.
    auto header = nlohmann::json::parse(good.substr(0, nl));
    SECTION("feature_version") {
      header["feature_version"] = 2.44444e111;
    }
    SECTION("model_bytes") {
      header["model_bytes"] = -1;
    }
    SECTION("a parameter") {
      header["params"]["max_depth"] = 1e300;
    }
    SECTION("a parameter that is no number") {
      header["params"]["eta"] = "fast";
    }
    write_all(path, header.dump() + "\n" + good.substr(nl + 1));
  }
  SECTION("garbage that passes the checksum") {
    // Only XGBoost can tell: its error must come back as an Error.
    std::string body(200, '\x7b');
    auto header = nlohmann::json::parse(good.substr(0, nl));
    header["model_bytes"] = body.size();
    header["model_fnv1a64"] = fnv1a(body);
    write_all(path, header.dump() + "\n" + body);
  }
  auto loaded = model::XGBoostModel::load(path);
  REQUIRE_FALSE(loaded.ok());
  REQUIRE(loaded.error().id() == "model-corrupt");
  std::remove(path.c_str());
}

TEST_CASE("saving needs a trained model and a writable place", "[model][xgboost][error]") {
  model::XGBoostModel fresh;
  auto untrained = fresh.save(temp_path("fresh.model"));
  REQUIRE(untrained.has_value());
  REQUIRE(untrained->id() == "model-untrained");

  auto unwritable = trained_model().save("/nonexistent-dir/kiln/x.model");
  REQUIRE(unwritable.has_value());
  REQUIRE(unwritable->id() == "model-write-failed");
}

TEST_CASE("XGBoost failures and bad rows are Errors and never crashes", "[model][xgboost][error]") {
  const Data& d = data();
  std::vector<model::Sample> part(d.train.begin(), d.train.begin() + 20);

  model::XGBoostParams p;
  p.tree_method = "no-such-method";
  model::XGBoostModel bad(p);
  auto r = catch_user_error([&]() -> Expected<bool> {
    bad.train(part);
    return true;
  });
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.error().id() == "xgboost-failed");
  REQUIRE_FALSE(bad.trained());

  std::vector<model::Sample> wrong = part;
  wrong[3].features.rows[0].pop_back();
  model::XGBoostModel m;
  auto w = catch_user_error([&]() -> Expected<bool> {
    m.train(wrong);
    return true;
  });
  REQUIRE_FALSE(w.ok());
  REQUIRE(w.error().id() == "model-feature-count");
  auto pw = catch_user_error([&]() -> Expected<std::vector<double>> {
    return trained_model().predict({wrong[3].features});
  });
  REQUIRE_FALSE(pw.ok());
  REQUIRE(pw.error().id() == "model-feature-count");
}

TEST_CASE("untrained and empty programs", "[model][xgboost]") {
  const Data& d = data();
  model::XGBoostModel m;
  REQUIRE_FALSE(m.trained());
  model::ProgramFeatures empty;
  auto before = m.predict({d.train[0].features, empty});
  REQUIRE(before[0] == 0);
  REQUIRE(before[1] == -std::numeric_limits<double>::infinity());
  auto after = trained_model().predict({d.train[0].features, empty});
  REQUIRE(std::isfinite(after[0]));
  REQUIRE(after[1] == -std::numeric_limits<double>::infinity());

  // Nothing usable to train on: still untrained.
  m.train({model::Sample{empty, 1.0, "t"}});
  REQUIRE_FALSE(m.trained());
  REQUIRE(m.predict(std::vector<model::ProgramFeatures>{}).empty());
}

TEST_CASE("continue_training adds rounds on new data", "[model][xgboost]") {
  const Data& d = data();
  std::vector<model::Sample> first(d.train.begin(), d.train.begin() + 100);
  std::vector<model::Sample> more(d.train.begin() + 100, d.train.begin() + 200);
  model::XGBoostParams p;
  p.continue_rounds = 20;
  model::XGBoostModel m(p);
  m.train(first);
  const int rounds = m.rounds();
  const auto before = m.predict(features_of(more));
  m.continue_training(more);
  REQUIRE(m.rounds() > rounds);
  REQUIRE(m.rounds() <= rounds + 20);
  REQUIRE(m.training_samples() == 200);
  const auto after = m.predict(features_of(more));
  REQUIRE(after != before);
  // It fits the new data better than before.
  auto rmse = [&](const std::vector<double>& s) {
    double e = 0;
    for (size_t i = 0; i < more.size(); ++i)
      e += (s[i] - more[i].label) * (s[i] - more[i].label);
    return std::sqrt(e / static_cast<double>(more.size()));
  };
  REQUIRE(rmse(after) < rmse(before));

  // An untrained model trains from scratch.
  model::XGBoostModel fresh(p);
  fresh.continue_training(first);
  REQUIRE(fresh.trained());
}

TEST_CASE("a prior survives retraining and ranks a new task better than a few samples alone",
          "[model][xgboost]") {
  const Data& d = data();
  // The prior knows task A only; the run is on task B with 16 samples.
  model::XGBoostModel m = prior_of_task_a();
  const int prior_rounds = m.rounds();
  REQUIRE(m.has_prior());
  std::vector<model::Sample> few(d.train_b.samples.begin(), d.train_b.samples.begin() + 16);
  m.train(few);
  REQUIRE(m.rounds() >= prior_rounds);
  REQUIRE(m.rounds() <= prior_rounds + m.params().continue_rounds);
  const std::vector<model::Sample> held_b = held_out_of_task_b();
  REQUIRE(held_b.size() > 50);
  const auto once = m.predict(features_of(held_b));
  // Every retrain starts from the prior again: the trees do not pile up.
  m.train(few);
  CHECK(m.predict(features_of(held_b)) == once);

  model::XGBoostModel scratch;
  scratch.train(few);
  const double with_prior = model::pairwise_accuracy(scored(held_b, once));
  const double alone =
      model::pairwise_accuracy(scored(held_b, scratch.predict(features_of(held_b))));
  WARN("task B from 16 samples: pairwise " << with_prior << " with the prior of task A, " << alone
                                           << " alone");
  CHECK(with_prior > alone + 0.05);

  // Saved, the prior and its corrections are one model.
  const std::string path = temp_path("prior.model");
  REQUIRE_FALSE(m.save(path).has_value());
  auto loaded = model::XGBoostModel::load(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->predict(features_of(held_b)) == once);
  std::remove(path.c_str());
}

TEST_CASE("local trees on a prior grow with what the samples teach and noise adds none",
          "[model][xgboost]") {
  const Data& d = data();
  model::XGBoostModel m = prior_of_task_a();
  const int prior_rounds = m.rounds();

  // Task B's labels shuffled among its programs: nothing to learn, and
  // every tree fitted to them would rank task B's other programs at random.
  std::vector<double> labels;
  for (const model::Sample& x : d.train_b.samples)
    labels.push_back(x.label);
  std::mt19937 rng(5);
  std::shuffle(labels.begin(), labels.end(), rng);
  std::vector<model::Sample> noise = d.train_b.samples;
  for (std::size_t i = 0; i < noise.size(); ++i)
    noise[i].label = labels[i];
  const std::vector<model::Sample> held_b = held_out_of_task_b();
  auto ranking = [&] {
    return model::pairwise_accuracy(scored(held_b, m.predict(features_of(held_b))));
  };
  const double prior_alone = ranking();
  m.train(noise);
  const int noise_rounds = m.rounds() - prior_rounds;
  const double after_noise = ranking();

  m.train(d.train_b.samples);
  const int real_rounds = m.rounds() - prior_rounds;
  const double after_real = ranking();
  WARN("local trees: " << noise_rounds << " on shuffled labels (task B pairwise " << after_noise
                       << "), " << real_rounds << " on task B's labels (" << after_real
                       << "); the prior alone " << prior_alone);
  CHECK(noise_rounds * 4 < real_rounds);
  CHECK(after_noise > prior_alone - 0.03);
  CHECK(after_real > prior_alone);
}

TEST_CASE("the random model is seeded and ranks nothing", "[model][random]") {
  const Data& d = data();
  model::RandomModel a(3), b(3), c(4);
  const auto programs = features_of(d.held_out);
  const auto sa = a.predict(programs);
  REQUIRE(sa == b.predict(programs));
  REQUIRE(sa != c.predict(programs));
  for (double s : sa)
    REQUIRE((s >= 0 && s < 1));
  REQUIRE(a.predict({model::ProgramFeatures{}})[0] == -std::numeric_limits<double>::infinity());
  REQUIRE_FALSE(a.trained());
}

TEST_CASE("features and prediction of 2048 matmul 512^3 configs", "[model][xgboost][!benchmark]") {
  space::SketchSpace sp(test::matmul_dag(512, 512, 512), space::SpaceParams{16, 2, 64});
  std::mt19937_64 rng(11);
  std::vector<schedule::LoweredFunc> funcs;
  while (funcs.size() < 2048) {
    auto state = schedule::State::replay(sp.dag(), sp.steps(sp.sample(rng)));
    if (state)
      funcs.push_back(test::lower_for_features(*state));
  }
  model::XGBoostModel& m = trained_model();
  auto start = std::chrono::steady_clock::now();
  std::vector<model::ProgramFeatures> programs;
  programs.reserve(funcs.size());
  std::size_t rows = 0;
  for (const auto& f : funcs) {
    programs.push_back(model::extract_features(f, test::test_hardware()));
    rows += programs.back().rows.size();
  }
  auto mid = std::chrono::steady_clock::now();
  auto scores = m.predict(programs);
  auto end = std::chrono::steady_clock::now();
  const double feat = std::chrono::duration<double>(mid - start).count();
  const double pred = std::chrono::duration<double>(end - mid).count();
  WARN("2048 matmul 512^3 configs (" << rows << " rows, " << m.rounds() << " trees): features "
                                     << feat << " s, predict " << pred << " s, total "
                                     << feat + pred << " s");
  REQUIRE(scores.size() == 2048);
}

TEST_CASE("the rank objective samples pairs in a large task and still ranks it",
          "[model][xgboost]") {
  // One task of 600 programs whose label is a known function of column 0:
  // all pairs would be 179 700; with 4 partners a program, about 2 400.
  auto program = [](double x) {
    model::ProgramFeatures f;
    std::vector<float> row(static_cast<size_t>(model::feature_count()), 0.0f);
    row[0] = static_cast<float>(x);
    row[1] = static_cast<float>(x * x);
    f.rows.push_back(row);
    return f;
  };
  std::vector<model::Sample> train, test;
  for (int i = 0; i < 700; ++i) {
    const double x = (i * 37 % 700) / 70.0;
    model::Sample s{program(x), 1.0 / (1.0 + (x - 6) * (x - 6)), "one-task"};
    (i < 600 ? train : test).push_back(s);
  }
  model::XGBoostParams p = model::offline_training_params();
  p.max_pairs_per_program = 4;
  model::XGBoostModel m(p);
  m.train(train);
  std::vector<model::ProgramFeatures> programs;
  for (const auto& s : test)
    programs.push_back(s.features);
  std::vector<double> scores = m.predict(programs);
  std::vector<model::Scored> scored;
  for (size_t i = 0; i < test.size(); ++i)
    scored.push_back({test[i].task, scores[i], test[i].label});
  REQUIRE(model::pairwise_accuracy(scored) > 0.9);
  // The sampling is part of the saved settings.
  REQUIRE(m.params().max_pairs_per_program == 4);
}

TEST_CASE("model files the fuzz target found are errors, not aborts", "[model][xgboost][error]") {
  // Each once aborted kiln or was undefined behaviour (test/fuzz/README.md);
  // the last has a checksum that matches its damaged body, so that only a
  // well-formedness check of the body stops it before XGBoost's reader.
  for (const char* name : {"float_feature_version", "format_not_a_string", "colsample_out_of_range",
                           "forged_checksum_huge_string"}) {
    CAPTURE(name);
    auto loaded = model::XGBoostModel::load(std::string(KILN_SOURCE_DIR) +
                                            "/test/fuzz/regressions/model/" + name + ".model");
    REQUIRE_FALSE(loaded.ok());
    CHECK(loaded.error().id() == "model-corrupt");
  }
}
