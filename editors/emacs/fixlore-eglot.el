;;; fixlore-eglot.el --- Use fixlore with Eglot  -*- lexical-binding: t; -*-

;;; Commentary:

;; Put this in your init file (or load it from there); Eglot ships with
;; Emacs 29 and later.  fixlore fronts your other language servers: list them
;; as its upstreams, so their code actions reach you through fixlore (which
;; learns from the ones you pick) and their diagnostics do not show twice.
;;
;; JSON in Eglot: a plist is an object, a vector is an array, `t' is true and
;; `:json-false' is false.  The same settings go to `initializationOptions'
;; and answer `workspace/configuration' for section "fixlore".

;;; Code:

(defvar fixlore-eglot-settings
  '(:learning t
    :workspaceKnowledge :json-false
    :baseKnowledge t
    :logLevel "info"
    :diagnosticsDebounceMs 250
    :manualFixPauseMs 2000
    :formatFixes t
    :upstreamTimeoutMs 3000
    ;; Only Python (with ruff) by default.  Front other languages' servers
    ;; by adding them here once they are installed (a server that is not
    ;; installed is reported at every start), e.g.:
    ;;   :rust [(:command ["rust-analyzer"])]
    ;;   :go [(:command ["gopls"])]
    ;;   :typescript [(:command ["typescript-language-server" "--stdio"])]
    :upstreams (:python [(:command ["ruff" "server"] :name "ruff")]))
  "fixlore's settings, as Eglot sends them (see docs/editors.md).")

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               ;; Python only by default.  fixlore also serves (syntax diagnostics,
               ;; learned fixes) rust-mode rust-ts-mode go-mode go-ts-mode js-mode
               ;; js-ts-mode typescript-ts-mode tsx-ts-mode sh-mode bash-ts-mode
               ;; java-mode java-ts-mode c-mode c-ts-mode: add them to this list.
               `((python-mode python-ts-mode)
                 . ("fixlore" "serve" "--stdio"
                    :initializationOptions (:fixlore ,fixlore-eglot-settings))))
  (setq-default eglot-workspace-configuration
                (plist-put (copy-sequence (default-value 'eglot-workspace-configuration))
                           :fixlore fixlore-eglot-settings)))

;; Start fixlore when a Python file is opened; add the other modes likewise.
(add-hook 'python-mode-hook #'eglot-ensure)
(add-hook 'python-ts-mode-hook #'eglot-ensure)

(provide 'fixlore-eglot)

;;; fixlore-eglot.el ends here
