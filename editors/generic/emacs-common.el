;;; emacs-common.el --- what eglot-test.el and lspmode-test.el share  -*- lexical-binding: t -*-
;;
;; Loaded first by each Emacs client's test (editors/generic/ci.sh): the
;; Debian elpa packages on the load-path, the checks, and what the user
;; sees and answers — `message' recorded, `completing-read' and
;; `y-or-n-p' answered as a user would. `loom-scenario' then runs the
;; session every client goes through; the test defines `loom-ask' (send
;; loom.ask) and starts the client in hello.txt first.

(require 'package)
(package-initialize)
;; Debian's elpa-* packages, which -Q leaves out of load-path.
(dolist (dir '("/usr/share/emacs/site-lisp/elpa/" "/usr/share/emacs/site-lisp/elpa-src/"))
  (when (file-directory-p dir)
    (let ((default-directory dir)) (normal-top-level-add-subdirs-to-load-path))))
(require 'cl-lib)

(defvar loom-bin (getenv "LOOM_TEST_BIN"))
(defvar loom-proj (file-name-as-directory (getenv "LOOM_TEST_PROJ")))
(defvar loom-failures 0)
(defvar loom-client "emacs" "The client's name, for the output: the test sets it.")
(defvar loom-shown nil "What the client showed the user with `message', newest first.")
(defvar loom-asked nil "The questions the client asked with `completing-read', newest first.")
(defvar loom-answer "Allow" "What the user picks in the next question.")

(defun loom-check (ok what &optional detail)
  (if ok
      (princ (format "ok   %s: %s\n" loom-client what))
    (setq loom-failures (1+ loom-failures))
    (princ (format "FAIL %s: %s%s\n" loom-client what (if detail (format "\n     %s" detail) "")))))

(defun loom-shown-text () (mapconcat #'identity (reverse loom-shown) "\n"))

(defun loom-wait (secs what pred)
  "Wait up to SECS for PRED, processing the server's messages."
  (let ((deadline (+ (float-time) secs)) ok)
    (while (and (not (setq ok (funcall pred))) (< (float-time) deadline))
      (sleep-for 0.05))
    (loom-check ok what (unless ok (format "shown so far:\n%s" (loom-shown-text))))
    ok))

(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (when fmt (push (apply #'format-message fmt args) loom-shown))
              (apply orig fmt args)))
(advice-add 'completing-read :override
            (lambda (prompt &rest _)
              (push (substring-no-properties prompt) loom-asked)
              loom-answer))
(advice-add 'y-or-n-p :override (lambda (&rest _) t))

(defun loom-git (&rest args)
  (with-temp-buffer
    (let ((default-directory loom-proj))
      (apply #'process-file "git" nil t nil args))
    (buffer-string)))

(defun loom-scenario (shutdown)
  "The answer, a command allowed, a change kept, a change discarded; then
SHUTDOWN the client and exit 0 when every check passed, else 1."
  ;; The answer.
  (loom-ask "greet me")
  (loom-wait 20 "the answer is shown" (lambda () (string-match-p "Hello from loom\\." (loom-shown-text))))

  ;; A command, approved in the client's own question.
  (setq loom-answer "Allow")
  (loom-ask "run the command")
  (loom-wait 20 "the command's answer is shown" (lambda () (string-match-p "The command ran\\." (loom-shown-text))))
  (loom-check (cl-some (lambda (q) (string-match-p "wants to run bash:\ntouch ran.txt" q)) loom-asked)
              "the user was asked to allow the command" (format "%S" loom-asked))
  (loom-check (file-exists-p (expand-file-name "ran.txt" loom-proj)) "the approved command ran")

  ;; Review on: the user is asked, and sees the change; Keep lands it.
  (setq loom-answer "Keep" loom-asked nil)
  (let ((head (loom-git "rev-parse" "HEAD")))
    (loom-ask "shout it")
    (loom-wait 20 "the kept change's answer is shown" (lambda () (string-match-p "Shouted\\." (loom-shown-text))))
    (let ((q (car (last loom-asked))))
      (loom-check (and q (string-match-p "hello\\.txt (\\+2 −2)" q) (string-match-p "\\+ HELLO" q) (string-match-p "- hello" q))
                  "the review question shows the file, its +/- lines and the changed lines" (format "%S" q)))
    (loom-check (equal (with-current-buffer "hello.txt" (buffer-string)) "HELLO\nWORLD\n")
                "Keep: the buffer holds the change" (with-current-buffer "hello.txt" (buffer-string)))
    (loom-check (not (equal head (loom-git "rev-parse" "HEAD"))) "Keep: the change is committed")
    (loom-check (equal (loom-git "show" "HEAD:hello.txt") "HELLO\nWORLD\n") "Keep: the commit holds the change"))
  (with-current-buffer "hello.txt" (save-buffer))

  ;; A refused change leaves nothing.
  (setq loom-answer "Discard" loom-asked nil)
  (let ((head (loom-git "rev-parse" "HEAD")))
    (loom-ask "whisper it")
    (loom-wait 20 "the discarded change's answer is shown" (lambda () (string-match-p "Whisper answered\\." (loom-shown-text))))
    (loom-check (= (length loom-asked) 1) "Discard: asked once" (format "%S" loom-asked))
    (loom-check (equal (with-current-buffer "hello.txt" (buffer-string)) "HELLO\nWORLD\n")
                "Discard: the buffer is unchanged" (with-current-buffer "hello.txt" (buffer-string)))
    (loom-check (equal head (loom-git "rev-parse" "HEAD")) "Discard: nothing committed")
    (loom-check (equal (with-temp-buffer (insert-file-contents (expand-file-name "hello.txt" loom-proj)) (buffer-string)) "HELLO\nWORLD\n")
                "Discard: the file on disk is unchanged"))
  (ignore-errors (funcall shutdown))
  (princ (format "%s: %d failure(s)\n" loom-client loom-failures))
  (kill-emacs (if (zerop loom-failures) 0 1)))
