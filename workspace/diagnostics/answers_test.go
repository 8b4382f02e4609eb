package diagnostics

import "testing"

// TestPublishedAnswers: a publication with a version answers the text of
// that version or a later one; one without answers any text when nothing
// was sent (the server had it), else only if it came after the text was
// sent.
func TestPublishedAnswers(t *testing.T) {
	for _, tc := range []struct {
		pd    publishedDiags
		want  int32
		seqAt uint64
		sent  bool
		ok    bool
	}{
		{publishedDiags{hasVersion: true, version: 3, seq: 1}, 3, 5, true, true},
		{publishedDiags{hasVersion: true, version: 4, seq: 1}, 3, 5, true, true},
		{publishedDiags{hasVersion: true, version: 2, seq: 9}, 3, 5, false, false},
		{publishedDiags{seq: 5}, 3, 5, false, true},
		{publishedDiags{seq: 5}, 3, 5, true, false},
		{publishedDiags{seq: 6}, 3, 5, true, true},
	} {
		if got := tc.pd.answers(tc.want, tc.seqAt, tc.sent); got != tc.ok {
			t.Errorf("%+v answers version %d sent %v after %d: %v, want %v", tc.pd, tc.want, tc.sent, tc.seqAt, got, tc.ok)
		}
	}
}
