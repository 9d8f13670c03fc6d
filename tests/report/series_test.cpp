// report::coarsen: equal-width buckets merged by the smallest listed factor that leaves at most
// max_points, each output the mean of its inputs.
#include "report/series.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace fmsim::report {
namespace {

TEST(Coarsen, ShortSeriesIsUnchanged) {
  // 5 values, at most 10 points: factor 1, the values themselves.
  const std::vector<double> v{1, 2, 3, 4, 5};
  const auto c = coarsen(v, 10);
  EXPECT_EQ(c.factor, 1u);
  EXPECT_EQ(c.mean, v);
}

TEST(Coarsen, HourlyMonthBecomesSixHourMeans) {
  // 28 days of hourly buckets = 672 values, at most 120 points: 672/4 = 168 > 120 and
  // 672/6 = 112 <= 120, so factor 6 (6 h) and 112 points; bucket k holds hours 6k..6k+5, whose
  // values (= the hour index) average to 6k + 2.5.
  std::vector<double> v;
  for (int h = 0; h < 672; ++h) v.push_back(h);
  const auto c = coarsen(v, 120);
  EXPECT_EQ(c.factor, 6u);
  ASSERT_EQ(c.mean.size(), 112u);
  for (std::size_t k = 0; k < c.mean.size(); ++k) EXPECT_DOUBLE_EQ(c.mean[k], 6.0 * k + 2.5);
}

TEST(Coarsen, LastGroupIsTheMeanOfWhatIsLeft) {
  // 7 values, at most 3 points: factor 3 (ceil(7/2) = 4 > 3, ceil(7/3) = 3): groups {0,1,2},
  // {3,4,5}, {6} with means 1, 4, 6.
  const std::vector<double> v{0, 1, 2, 3, 4, 5, 6};
  const auto c = coarsen(v, 3);
  EXPECT_EQ(c.factor, 3u);
  EXPECT_EQ(c.mean, (std::vector<double>{1, 4, 6}));
}

TEST(Coarsen, BeyondTheListTheFactorIsTheCeiling) {
  // 10,000 values into at most 10 points: 720 leaves ceil(10000/720) = 14 > 10, so the factor is
  // ceil(10000/10) = 1000 and the means of constant groups are the constant.
  const std::vector<double> v(10'000, 2.5);
  const auto c = coarsen(v, 10);
  EXPECT_EQ(c.factor, 1000u);
  EXPECT_EQ(c.mean, std::vector<double>(10, 2.5));
}

TEST(Coarsen, EmptyStaysEmpty) { EXPECT_TRUE(coarsen(std::vector<double>{}, 5).mean.empty()); }

}  // namespace
}  // namespace fmsim::report
