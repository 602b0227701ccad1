package selection

import (
	"slices"
	"strings"
)

// Lock is a task's selection, kept across its turns: the model keeps the
// same tools until the user switches task.
type Lock struct {
	// Task is the prompt the selection was made for.
	Task string `json:"task"`
	// Names are the selected tools.
	Names []string `json:"names"`
	// Groups are the groups chosen on the way, if any.
	Groups []string `json:"groups,omitempty"`
}

// switchPhrases mark an explicit change of task.
var switchPhrases = []string{
	"new task", "another task", "different task", "switch task", "switch tasks", "change of task",
	"something else", "different topic", "new topic", "unrelated", "forget that", "never mind",
	"换个任务", "新任务", "换一个任务", "另一个任务", "换个话题",
}

// minIntentWords is how many content words a prompt needs before it can
// count as a change of intent by itself: short follow-ups ("yes", "do
// it", "and the next one") continue the task.
const minIntentWords = 4

// Reselect reports whether prompt starts a new task, so the lock should be
// dropped and the tools selected again, and why. A prompt switches task
// when it says so ("new task", "换个任务", /reselect, …), or when it has
// at least four content words and shares none with the locked task, the
// locked tools' names or their briefs (catalog may be nil).
func (l *Lock) Reselect(prompt string, catalog *Catalog) (bool, string) {
	lower := strings.ToLower(prompt)
	if strings.HasPrefix(strings.TrimSpace(lower), "/reselect") {
		return true, "asked with /reselect"
	}
	for _, p := range switchPhrases {
		if strings.Contains(lower, p) {
			return true, "the prompt says " + `"` + p + `"`
		}
	}
	words := featureSet(prompt)
	if len(words) < minIntentWords {
		return false, ""
	}
	context := l.Task
	for _, n := range l.Names {
		context += " " + strings.NewReplacer("_", " ", "-", " ", ".", " ").Replace(n)
		if catalog != nil {
			if i := slices.IndexFunc(catalog.Choices, func(e Choice) bool { return e.Name == n }); i >= 0 {
				context += " " + catalog.Choices[i].Brief
			}
		}
	}
	known := featureSet(context)
	for _, w := range words {
		if _, ok := slices.BinarySearch(known, w); ok {
			return false, ""
		}
	}
	return true, "the prompt shares no word with the locked task"
}
