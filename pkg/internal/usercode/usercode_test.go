package usercode

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type ptrErr struct{ s string }

func (e *ptrErr) Error() string { return e.s }

type boomErr struct{}

func (boomErr) Error() string { panic("boom") }

// stringerPanicsWithStringer panics, in String, with a value whose String
// panics too: fmt cannot print it.
type stringerPanicsWithStringer struct{}

func (stringerPanicsWithStringer) String() string { panic(stringerPanicsWithStringer{}) }

func TestErrorText(t *testing.T) {
	var typedNil *ptrErr
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{errors.New("plain"), "plain"},
		{typedNil, "typed-nil error (*usercode.ptrErr)"},
		{boomErr{}, "error of type usercode.boomErr: Error panicked: boom"},
		{fmt.Errorf("wrapped: %w", boomErr{}), "wrapped: %!v(PANIC=Error method: boom)"},
	} {
		assert.Equal(t, tc.want, ErrorText(tc.err))
	}
}

func TestIsNil(t *testing.T) {
	var p *ptrErr
	var m map[string]int
	var s []int
	var f func()
	var c chan int
	var u unsafe.Pointer
	var e error = p // a typed nil in a non-empty interface
	for _, v := range []any{nil, p, m, s, f, c, u, e} {
		assert.True(t, IsNil(v), "%T", v)
	}
	x := 1
	for _, v := range []any{0, "", &ptrErr{}, map[string]int{}, struct{}{}, []int{}, func() {}, make(chan int), unsafe.Pointer(&x), [0]int{}, error(&ptrErr{})} {
		assert.False(t, IsNil(v), "%T", v)
	}
}

func TestCallRecoversWithStack(t *testing.T) {
	assert.Nil(t, Call(func() {}))
	p := Call(func() { panic("boom") })
	if assert.NotNil(t, p) {
		assert.Equal(t, "boom", p.Value)
		assert.Contains(t, string(p.Stack), "usercode.TestCallRecoversWithStack")
		assert.Equal(t, "panic: boom", p.Error())
	}
	assert.Nil(t, Recovered(nil))
}

func TestSprintNeverPanics(t *testing.T) {
	assert.Equal(t, "x", Sprint("x"))
	assert.Equal(t, "<usercode.stringerPanicsWithStringer, unprintable>", Sprint(stringerPanicsWithStringer{}))
	assert.Equal(t, "%!v(PANIC=Error method: boom)", Sprint(boomErr{}))
}
