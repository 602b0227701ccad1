package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals that ask a process to end rather than to
// interrupt what it does: SIGTERM (kill, timeout, systemd, docker stop)
// and SIGHUP (the terminal went away).
var stopSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP}

// SignalContext returns a context that is cancelled when the process gets
// SIGTERM or SIGHUP, for [Main]: a run then ends as after Ctrl-C (the calls
// in flight are answered as cancelled and the session is closed), and chat
// ends. After the first such signal the default action is restored, so a
// second one ends the process at once. stop releases the signals.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(stopSignal{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// stopSignal is the cause of SignalContext's cancellation.
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return fmt.Sprintf("%v received", s.sig) }

// stoppedBySignal returns the signal that stopped ctx, if one did.
func stoppedBySignal(ctx context.Context) (os.Signal, bool) {
	var s stopSignal
	if errors.As(context.Cause(ctx), &s) {
		return s.sig, true
	}
	return nil, false
}

// interruptible returns a context that ctx's cancellation and Ctrl-C
// (SIGINT) both end. After the first Ctrl-C the default action is
// restored, so a second one ends the process at once.
func interruptible(ctx context.Context) (context.Context, func()) {
	ictx, stop := signal.NotifyContext(ctx, os.Interrupt)
	go func() {
		<-ictx.Done()
		stop()
	}()
	return ictx, stop
}
