package queue

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOrderAndEnd(t *testing.T) {
	t.Parallel()
	q := New[int]()
	for i := range 5 {
		require.True(t, q.Push(i))
	}
	// A policy merges into what waits.
	require.True(t, q.Edit(func(items []int) []int { items[len(items)-1] += 10; return items }))
	q.Close()
	require.False(t, q.Push(99), "nothing is added once closed")
	var got []int
	took := 0
	for {
		v, ok := q.Pop(context.Background(), func(int) { took++ })
		if !ok {
			break
		}
		got = append(got, v)
	}
	require.Equal(t, []int{0, 1, 2, 3, 14}, got, "what waited is still taken after Close, in order")
	require.Equal(t, 5, took)
}

func TestPopWaitsAndStopsWithItsContext(t *testing.T) {
	t.Parallel()
	q := New[string]()
	got := make(chan string)
	go func() {
		v, _ := q.Pop(context.Background(), nil)
		got <- v
	}()
	q.Push("late")
	require.Equal(t, "late", <-got)

	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan bool)
	go func() {
		_, ok := q.Pop(ctx, nil)
		ended <- ok
	}()
	cancel()
	require.False(t, <-ended, "a cancelled Pop ends without an item")
	require.Equal(t, 0, q.Len())
}
