//go:build kernelshark

// The KernelShark test needs an X server and takes about 20 s, so it builds
// only with the tag kernelshark: `make test-kernelshark` (which make ci
// runs) installs KernelShark, Xvfb and xwd and runs it.

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tickemu/tickemu/framework/sdk/ktime"
	"github.com/tickemu/tickemu/framework/trace"
)

// ksScript runs KernelShark on $TRACE inside the virtual X server, waits for
// its main window (xwd -name finds it until the title names the file),
// gives it time to load and draw, takes a screenshot of the screen and says whether KernelShark was still
// running then.
const ksScript = `
kernelshark -geometry 1200x760+0+0 "$TRACE" > "$DIR/kernelshark.log" 2>&1 &
pid=$!
i=0
# The main window is titled "KernelShark" until a file is loaded and
# "Kernel Shark (FILE)" after: either will do (the log check below says
# whether it loaded).
until xwd -name "Kernel Shark ($TRACE)" -silent > /dev/null 2>&1 || xwd -name KernelShark -silent > /dev/null 2>&1; do
	i=$((i+1))
	if [ $i -gt 60 ] || ! kill -0 $pid 2>/dev/null; then echo "no KernelShark window"; kill $pid 2>/dev/null; exit 1; fi
	sleep 1
done
sleep 8
xwd -root -silent > "$DIR/shot.xwd"
if kill -0 $pid 2>/dev/null; then echo running; fi
kill $pid
wait $pid 2>/dev/null
exit 0
`

// TestKernelShark opens a trace.dat of default.hcl in Debian's KernelShark
// under Xvfb and checks that it loads it: the main window appears,
// KernelShark is still running 8 s later, its log says it loaded the file
// and nothing else but the two notices it always prints, and the window
// shows the CPU plots in task colours (a window without data is greys). The
// screenshot is kept in test-artifacts/kernelshark.png.
func TestKernelShark(t *testing.T) {
	for _, b := range []string{"kernelshark", "xvfb-run", "xwd", "xauth"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Fatalf("%s is not installed: run scripts/install-test-deps.sh (make test-kernelshark does)", b)
		}
	}
	dir := t.TempDir()
	// A window after the start: KernelShark 2.2.1 leaves out events at
	// time stamp 0 of some CPUs (a real trace never has them).
	data := windowTraceFrom(t, "default.hcl", trace.FormatDat, ktime.Time(10*ktime.Millisecond), ktime.Time(60*ktime.Millisecond))
	tr := filepath.Join(dir, "default.dat")
	if err := os.WriteFile(tr, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// KernelShark asks root to confirm in a dialog unless its settings say
	// not to (KsMainWindow::_rootWarning()).
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "setting.ini"), []byte("[General]\nnoRootWarn=true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xvfb-run", "-a", "-s", "-screen 0 1280x800x24", "sh", "-c", ksScript)
	cmd.Env = append(os.Environ(), "TRACE="+tr, "DIR="+dir, "KS_USER_CACHE_DIR="+cache, "XDG_RUNTIME_DIR="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	logb, _ := os.ReadFile(filepath.Join(dir, "kernelshark.log"))
	if err != nil {
		t.Fatalf("xvfb-run kernelshark: %v\n%s\nkernelshark's log:\n%s", err, out.String(), logb)
	}
	if !strings.Contains(out.String(), "running") {
		t.Errorf("KernelShark had exited when the screenshot was taken:\n%s", logb)
	}
	if !strings.Contains(string(logb), `Loading  "`+tr+`"`) {
		t.Errorf("KernelShark's log does not say it loaded %s:\n%s", tr, logb)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(logb)), "\n") {
		switch {
		case strings.HasPrefix(l, "Loading  "),
			strings.HasPrefix(l, "QStandardPaths: "),
			// The KVM plugin looks for kvm events in every trace.
			strings.HasPrefix(l, `plugin "kvm_combo" failed to initialize`):
		default:
			t.Errorf("KernelShark said: %s", l)
		}
	}
	xb, err := os.ReadFile(filepath.Join(dir, "shot.xwd"))
	if err != nil {
		t.Fatal(err)
	}
	screen, err := decodeXWD(xb)
	if err != nil {
		t.Fatal(err)
	}
	img := window(screen)
	shot := filepath.Join(artifactDir(t), "kernelshark.png")
	f, err := os.Create(shot)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Logf("screenshot: %s", shot)
	b := img.Bounds()
	if b.Dx() < 600 || b.Dy() < 400 {
		t.Errorf("KernelShark's window is %dx%d", b.Dx(), b.Dy())
	}
	// Task colours in the CPU plots are saturated; KernelShark's own widgets
	// are greys, and a window not yet drawn is black. Measured: 21414
	// saturated and 15316 dark pixels of 684000 with this trace; with a
	// trace.dat of no events 805 saturated, 53976 dark of 164268.
	saturated, dark := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := img.RGBAAt(x, y)
			if max(c.R, c.G, c.B)-min(c.R, c.G, c.B) > 100 {
				saturated++
			}
			if int(c.R)+int(c.G)+int(c.B) < 60 {
				dark++
			}
		}
	}
	if saturated < 5000 || dark > b.Dx()*b.Dy()/10 {
		t.Errorf("the screenshot has %d saturated and %d black pixels of %d: KernelShark shows no trace", saturated, dark, b.Dx()*b.Dy())
	}
}

// window crops the screen to what is not the X server's black background:
// KernelShark's window.
func window(s *image.RGBA) *image.RGBA {
	b := s.Bounds()
	r := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if c := s.RGBAAt(x, y); c.R|c.G|c.B != 0 {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	if r.Empty() {
		return s
	}
	return s.SubImage(r).(*image.RGBA)
}

// decodeXWD decodes xwd's dump of a 24-bit TrueColor window (X11/XWDFile.h:
// a header of 25 big-endian 32-bit fields, the window name, the colour map,
// then the pixels, 4 bytes each in the server's byte order).
func decodeXWD(b []byte) (*image.RGBA, error) {
	if len(b) < 100 {
		return nil, fmt.Errorf("xwd: %d bytes", len(b))
	}
	be := binary.BigEndian
	h := make([]uint32, 25)
	for i := range h {
		h[i] = be.Uint32(b[i*4:])
	}
	hsize, format, w, ht, order, bpp, bpl, ncolors := h[0], h[2], h[4], h[5], h[7], h[11], h[12], h[19]
	// Xvfb's depth-24 screen says 24 bits a pixel but stores 32 (its
	// bytes_per_line is 4 a pixel).
	if format != 2 || (bpp != 24 && bpp != 32) || w == 0 || bpl != 4*w {
		return nil, fmt.Errorf("xwd: format %d, %d bits a pixel, %d bytes a line of %d: want ZPixmap, 4 bytes a pixel", format, bpp, bpl, w)
	}
	data := b[min(len(b), int(hsize+ncolors*12)):]
	if len(data) < int(bpl*ht) {
		return nil, fmt.Errorf("xwd: %d bytes of pixels for %dx%d", len(data), w, ht)
	}
	img := image.NewRGBA(image.Rect(0, 0, int(w), int(ht)))
	for y := 0; y < int(ht); y++ {
		for x := 0; x < int(w); x++ {
			p := data[y*int(bpl)+x*4:]
			v := binary.LittleEndian.Uint32(p)
			if order != 0 {
				v = be.Uint32(p)
			}
			img.SetRGBA(x, y, color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255})
		}
	}
	return img, nil
}
