package search

import "testing"

func TestLooksLikePath(t *testing.T) {
	for w, want := range map[string]bool{"/var/log/app.log": true, "budget.xlsx": true, ".gitlab-ci.yml": true, "Next.js": false, "socket.io": false, "README.md": true, "src/main.go": true, "./x": true, "https://a.b/c.json": false, "2.3": false, "v1.2.3": false, "index.js": true, "Vue.js": false, "free/busy": false, "~/notes.txt": true, "config.yaml,": true} {
		if got := looksLikePath(w); got != want {
			t.Errorf("%q: %v", w, got)
		}
	}
}
