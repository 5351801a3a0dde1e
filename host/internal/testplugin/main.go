// Command testplugin is the host's test and benchmark plugin. Its tools
// misbehave on request (panic, exit, hang, print to stdout) so that the
// host's tests run against a real subprocess.
//
// With TESTPLUGIN_BARE_SOCKET set it serves the same skill on that unix
// socket with a plain gRPC server and no go-plugin, for
// BenchmarkBareGRPCUnary.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	_ "github.com/agentskills/agent/host/internal/testplugin/earlynoise"
	"github.com/agentskills/agent/sdk"
)

func init() {
	if os.Getenv("TESTPLUGIN_NOISE") != "" {
		fmt.Println("main package init noise")
	}
}

type echoIn struct {
	Text string `json:"text" description:"text to send back"`
	Note string `json:"note,omitempty"`
}

type echoOut struct {
	Text string `json:"text"`
}

type empty struct{}

type hangIn struct {
	IgnoreCancel bool `json:"ignore_cancel,omitempty"`
}

type exitIn struct {
	Code int `json:"code"`
}

type failIn struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

type logIn struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

type printIn struct {
	Text string `json:"text"`
}

var canceled atomic.Int64

func skill() sdk.Skill {
	return sdk.NewSkill(
		sdk.NewTool("echo", "Return the text.", func(ctx context.Context, in echoIn) (echoOut, error) {
			_, span := sdk.StartSpan(ctx, "echo work")
			defer span.End()
			if in.Note != "" {
				sdk.Note(ctx, in.Note)
			}
			return echoOut{Text: in.Text}, nil
		}),
		probeTool(),
		sdk.NewTool("panic", "Panic.", func(context.Context, empty) (string, error) {
			panic("testplugin: panic on request")
		}),
		sdk.NewTool("exit", "Exit with the code.", func(_ context.Context, in exitIn) (string, error) {
			os.Exit(in.Code)
			return "", nil
		}),
		sdk.NewTool("daemon", "Start a daemon (sh forks sleep, which calls setsid, and exits) and return its pid.", func(context.Context, empty) (int, error) {
			out, err := exec.Command("/bin/sh", "-c", "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!").Output()
			if err != nil {
				return 0, err
			}
			return strconv.Atoi(strings.TrimSpace(string(out)))
		}),
		sdk.NewTool("hang", "Block until canceled, or forever.", func(ctx context.Context, in hangIn) (string, error) {
			if in.IgnoreCancel {
				select {}
			}
			<-ctx.Done()
			canceled.Add(1)
			return "", ctx.Err()
		}),
		sdk.NewTool("canceled", "How many hang calls saw their context end.", func(context.Context, empty) (int64, error) {
			return canceled.Load(), nil
		}),
		sdk.NewTool("env", "The process environment.", func(context.Context, empty) ([]string, error) {
			return os.Environ(), nil
		}),
		sdk.NewTool("pid", "The process id.", func(context.Context, empty) (int, error) {
			return os.Getpid(), nil
		}),
		sdk.NewTool("log", "Log a line through the SDK logger.", func(_ context.Context, in logIn) (string, error) {
			sdk.Logger().Log(hclog.LevelFromString(in.Level), in.Message, "tool", "log")
			return "logged", nil
		}),
		sdk.NewTool("print", "Print text to stdout three ways.", func(_ context.Context, in printIn) (string, error) {
			fmt.Println(in.Text)
			_, _ = syscall.Write(1, []byte(in.Text+" (fd 1)\n"))
			_, _ = fmt.Fprintln(os.Stderr, in.Text+" (stderr)")
			return "printed", nil
		}),
		sdk.NewTool("fail", "Fail with a code, or a plain error.", func(_ context.Context, in failIn) (string, error) {
			if in.Code == "" {
				return "", errors.New(in.Message)
			}
			return "", sdk.Errorf(in.Code, "%s", in.Message)
		}),
	)
}

func main() {
	if os.Getenv("TESTPLUGIN_NOISE") != "" {
		fmt.Println("main noise before Serve")
	}
	if path := os.Getenv("TESTPLUGIN_BARE_SOCKET"); path != "" {
		bare(path)
		return
	}
	if v := os.Getenv("TESTPLUGIN_PROTOCOL"); v != "" {
		// As a plugin built for protocol v only: go-plugin serves the
		// newest version the host offers, so offer it only v.
		os.Setenv("PLUGIN_PROTOCOL_VERSIONS", v)
	}
	sdk.Serve(skill())
}

// bare serves the skill without go-plugin: the baseline for the warm call
// benchmark. It exits when stdin closes (the benchmark holds the pipe).
func bare(path string) {
	lis, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv := grpc.NewServer()
	if err := sdk.PluginSets(skill())[sdk.ProtocolVersion][sdk.PluginName].(plugin.GRPCPlugin).GRPCServer(nil, srv); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() {
		buf := make([]byte, 1)
		_, _ = os.Stdin.Read(buf)
		srv.Stop()
	}()
	go func() {
		// A dead benchmark must not leave this process behind.
		for range time.Tick(500 * time.Millisecond) {
			if os.Getppid() == 1 {
				os.Exit(1)
			}
		}
	}()
	_ = srv.Serve(lis)
}
