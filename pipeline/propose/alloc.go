package propose

import "sort"

// apportion splits n among places in proportion to weights, by largest
// remainder (ties to the earlier place): no place gets more than its
// weight when n is at most their sum, and every place with weight 0 gets
// nothing unless every weight is 0 (then the first place gets all).
func apportion(n int64, weights []int64) []int64 {
	out := make([]int64, len(weights))
	if n <= 0 || len(weights) == 0 {
		return out
	}
	var total int64
	for _, w := range weights {
		total += w
	}
	if total == 0 {
		out[0] = n
		return out
	}
	rem := make([]int64, len(weights))
	left := n
	for i, w := range weights {
		out[i] = n * w / total
		rem[i] = n*w - out[i]*total
		left -= out[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for _, i := range order[:left] {
		out[i]++
	}
	return out
}
