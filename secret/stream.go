package secret

// Stream masks secrets in a text that arrives in pieces, such as the
// model's streamed answer, where a secret may be cut between two pieces
// (or three, or more). Write returns what of the text so far can be shown
// now, masked; it holds back only a tail that may be the beginning of a
// secret value (at most the longest value's length minus one byte) or a
// "Bearer …" token that may go on, until the next piece shows what it is.
// Flush ends the text and returns what was held back. The pieces Write
// and Flush return, joined, are the whole text as Redactor.String masks
// it (a token longer than 4 KiB is masked without waiting for its end).
//
// Write allocates nothing when nothing is masked or held back, which is
// the common case. A Stream is not safe for concurrent use; the values
// added to its Redactor meanwhile apply from the next Write.
type Stream struct {
	r *Redactor
	// held is the tail not shown yet (masked already, where a whole
	// secret was in it).
	held string
	// prevWord says whether the last byte shown is a word byte: a
	// "bearer" right after a word byte is not a token.
	prevWord bool
	// inToken says that the text shown so far ends in a bearer token that
	// was masked and may go on: what follows of it is dropped.
	inToken tokenEnd
}

// Stream returns a new Stream that masks what r masks. A nil r masks
// nothing.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write adds piece to the text and returns what can be shown now.
func (st *Stream) Write(piece string) string {
	if st.r == nil {
		return piece
	}
	if st.inToken != tokenClosed {
		piece = st.skipToken(piece)
		if piece == "" {
			return ""
		}
	}
	text := piece
	if st.held != "" {
		text, st.held = st.held+piece, ""
	}
	values := st.r.values()
	text = maskValues(text, values)
	// Hold back from the earliest possible beginning of a secret; a cut
	// there must not split a token either ("Bearer Bearer " may end in
	// what looks like a new scheme, and is the first token's value).
	cut := min(valueTail(text, values), bearerTail(text, st.prevWord))
	cut = openBearer(text, cut, st.prevWord)
	if len(text)-cut > maxHeld(values) {
		// A token too long to wait for: mask it now and drop the rest
		// of it as it comes.
		text, st.inToken = maskBearers(text, st.prevWord)
		st.held, st.prevWord = "", false
		return text
	}
	text, st.held = text[:cut], text[cut:]
	if text == "" {
		return ""
	}
	text, _ = maskBearers(text, st.prevWord)
	st.prevWord = isWordByte(text[len(text)-1])
	return text
}

// maxHeldToken bounds the bearer token a Stream holds back whole.
const maxHeldToken = 4 << 10

// maxHeld is the most a Stream holds back: a bearer token up to
// maxHeldToken, or the beginning of the longest value.
func maxHeld(values *[]string) int {
	if values != nil && len(*values) > 0 && len((*values)[0]) > maxHeldToken {
		return len((*values)[0])
	}
	return maxHeldToken
}

// Flush ends the text: it returns what was held back, masked as a whole
// text is, and makes the Stream ready for a new text.
func (st *Stream) Flush() string {
	held, prevWord := st.held, st.prevWord
	*st = Stream{r: st.r}
	if held == "" {
		return ""
	}
	held, _ = maskBearers(maskValues(held, st.r.values()), prevWord)
	return held
}

// Holding reports whether Write held back text that Flush would return.
func (st *Stream) Holding() bool { return st.held != "" }

// skipToken drops from the start of piece what continues the bearer token
// already masked.
func (st *Stream) skipToken(piece string) string {
	i := 0
	if st.inToken == tokenOpen {
		for i < len(piece) && isTokenByte(piece[i]) {
			i++
		}
	}
	for i < len(piece) && piece[i] == '=' {
		i++
		st.inToken = tokenPadding
	}
	if i < len(piece) {
		st.inToken = tokenClosed
	}
	return piece[i:]
}
