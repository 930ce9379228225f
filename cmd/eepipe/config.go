package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	yaml "go.yaml.in/yaml/v3"

	"github.com/eepipe/eepipe/pipeline"
	"github.com/eepipe/eepipe/pipeline/savedset"
)

// Environment variables of the configuration (docs/configuration.md).
const (
	envBaseURL        = "EEPIPE_BASE_URL"
	envAPIKey         = "EEPIPE_API_KEY"
	envAPISecret      = "EEPIPE_API_SECRET"
	envLookupURL      = "EEPIPE_LOOKUP_URL"
	envLookupUsername = "EEPIPE_LOOKUP_USERNAME"
	envLookupPassword = "EEPIPE_LOOKUP_PASSWORD"

	// The company identifiers of the single account (optional): export
	// writes them into the company columns.
	envCompanyVAT          = "EEPIPE_COMPANY_VAT"
	envCompanyRegistration = "EEPIPE_COMPANY_REGISTRATION"
	envCompanyIDNumber     = "EEPIPE_COMPANY_ID_NUMBER"

	// envConfig names the configuration file when --config does not.
	envConfig = "EEPIPE_CONFIG"
)

// findConfig sets f.ConfigPath to the configuration file a run reads, in
// the order docs/configuration.md gives: --config, then EEPIPE_CONFIG, then
// $XDG_CONFIG_HOME/eepipe/config.yaml (~/.config/eepipe/config.yaml when
// XDG_CONFIG_HOME is unset or not absolute) when that file exists; none
// else. f.configFrom says which, for the debug log.
func findConfig(f *Factory) {
	switch {
	case f.ConfigPath != "":
		f.configFrom = "--config"
		return
	case f.getenv(envConfig) != "":
		f.ConfigPath, f.configFrom = f.getenv(envConfig), envConfig
		return
	}
	path := defaultConfigPath(f.getenv)
	if path == "" {
		f.configFrom = "no configuration file (no --config, no " + envConfig + ", and no home folder for the default file)"
		return
	}
	if _, err := os.Stat(path); err != nil {
		f.configFrom = "no configuration file (no --config, no " + envConfig + ", and no " + path + ")"
		return
	}
	f.ConfigPath, f.configFrom = path, "the default file"
}

// defaultConfigPath is $XDG_CONFIG_HOME/eepipe/config.yaml, or
// $HOME/.config/eepipe/config.yaml; "" when neither is known.
func defaultConfigPath(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "eepipe", "config.yaml")
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".config", "eepipe", "config.yaml")
	}
	return ""
}

// logConfigFile says at debug level which configuration file the run
// reads, and how it was found (findConfig).
func logConfigFile(f *Factory) {
	if f.ConfigPath == "" {
		f.Logger().Debug("configuration file: " + f.configFrom)
		return
	}
	f.Logger().Debug("configuration file", zap.String("path", f.ConfigPath), zap.String("from", f.configFrom))
}

// fileConfig is the YAML configuration file. Secrets are never in it:
// only the names of environment variables or files that hold them.
type fileConfig struct {
	BaseURL  string        `yaml:"base_url"`
	Lookup   *fileLookup   `yaml:"lookup"`
	Accounts []fileAccount `yaml:"accounts"`
	// State is the state store: an SQLite file (relative to the
	// configuration's folder) or a postgres:// URL (state.go).
	State string `yaml:"state"`
	// SameServiceAs is another address of the service, under which its
	// run history is kept (docs/configuration.md, "One service at
	// several addresses").
	SameServiceAs string `yaml:"same_service_as"`
	// Signers are the people whose sign-off a change set needs to be
	// applied (docs/apply-and-state.md, "Who can sign").
	Signers []fileSigner `yaml:"signers"`
	// Map is the mapping file the workbooks are read with (relative to
	// the configuration's folder), when --map names none.
	Map string `yaml:"map"`
}

// fileSigner is one trusted signer: a name and the public key
// `eepipe signer new` printed for them.
type fileSigner struct {
	Name      string `yaml:"name"`
	PublicKey string `yaml:"public_key"`
}

type fileLookup struct {
	URL          string `yaml:"url"`
	Username     string `yaml:"username"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
}

type fileAccount struct {
	Name          string `yaml:"name"`
	CompanyID     string `yaml:"company_id"`
	APIKey        string `yaml:"api_key"`
	APISecretEnv  string `yaml:"api_secret_env"`
	APISecretFile string `yaml:"api_secret_file"`
	// APIKeyID is the id of api_key on the service, which a key rotation
	// revokes it by (docs/configuration.md, "API keys"); 0 when not given.
	APIKeyID int64 `yaml:"api_key_id"`
	// The company's identifiers (optional): export writes them into the
	// company columns, so that an export of several accounts re-imports.
	VATNumber          string `yaml:"vat_number"`
	RegistrationNumber string `yaml:"registration_number"`
	IDNumber           string `yaml:"id_number"`
}

// Config is the resolved configuration of a run: flags over environment
// over file. It holds secrets: never log or print it (String redacts).
type Config struct {
	BaseURL  string
	Lookup   LookupConfig
	Accounts []AccountConfig
	// Warnings are problems that do not stop the run (a readable file
	// naming secret files).
	Warnings []string
	// Source describes where the settings came from, for logs.
	Source string
	// State is the configured state store ("" for the default; state.go).
	State string
	// SameServiceAs is the address the run history knows the service by,
	// when it is not BaseURL (same_service_as; state.go).
	SameServiceAs string
	// Signers are the trusted signers of change sets; none: a set's
	// sign-off is not required.
	Signers []savedset.Signer
}

// LookupConfig is the company lookup's URL and Basic credentials.
type LookupConfig struct {
	URL, Username string
	Password      string // secret
}

// Configured reports whether a company lookup is configured.
func (l LookupConfig) Configured() bool { return l.URL != "" }

// AccountConfig is one account: the company it belongs to, that
// company's identifiers when configured, and its key pair.
type AccountConfig struct {
	Name      string
	CompanyID string
	Company   pipeline.CompanyIDs // VAT, registration and ID number; may be empty
	APIKey    string
	APISecret string // secret
	// KeyID is the configuration's api_key_id (0: not given).
	KeyID int64
	// From is where the key pair was read, for a key rotation.
	From KeySource
}

// KeySource is where an account's key pair comes from: the file's account
// FileIndex (-1: none) unless KeyEnv names the environment variable of the
// key; the secret from the file SecretFile (an absolute or
// configuration-relative path resolved) or the environment variable
// SecretEnv.
type KeySource struct {
	FileIndex  int
	KeyEnv     string
	SecretFile string
	SecretEnv  string
}

// String describes the configuration without secrets.
func (c *Config) String() string {
	var names []string
	for _, a := range c.Accounts {
		names = append(names, a.Name)
	}
	return fmt.Sprintf("base URL %s, lookup %q, accounts [%s] (%s)", c.BaseURL, c.Lookup.URL, strings.Join(names, ", "), c.Source)
}

// connFlags are the connection flags of the commands that talk to the
// service; they override the environment and the file.
type connFlags struct {
	BaseURL   string
	LookupURL string
}

func (cf *connFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&cf.BaseURL, "base-url", "", "service base URL (overrides "+envBaseURL+" and base_url)")
	cmd.Flags().StringVar(&cf.LookupURL, "lookup-url", "", "company lookup base URL (overrides "+envLookupURL+" and lookup.url)")
}

// configNeeds says what a command needs from the configuration.
type configNeeds struct {
	Plans  bool // the plan API: base URL and at least one account
	Lookup bool // the company lookup
	Keys   bool // the accounts' key pairs alone (keys): no lookup needed
}

// lookupOnly reports whether the command uses the company lookup and
// nothing else (companies): the accounts' secrets are then not read.
func (n configNeeds) lookupOnly() bool { return n.Lookup && !n.Plans }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// loadConfig resolves the configuration from flags, environment and the
// --config file. Every problem is reported at once, as an ExitInvalid
// error, before any request is sent.
func loadConfig(f *Factory, flags connFlags, needs configNeeds) (*Config, error) {
	l := &configLoader{f: f, flags: flags, needs: needs, cfg: &Config{}, configDir: "."}
	logConfigFile(f)
	if err := l.readFile(); err != nil {
		return nil, err
	}
	l.sources()
	// Base URL: flag > env > file.
	l.cfg.BaseURL = first(flags.BaseURL, l.env(envBaseURL), l.fc.BaseURL)
	l.sameService()
	if err := resolveStateConfig(l.cfg, l.env(envState), l.fc.State, l.configDir); err != nil {
		l.bad("%v", err)
	}
	l.lookup()
	l.accounts()
	l.signers()
	l.needed()
	if len(l.problems) > 0 {
		return nil, configError(f.ConfigPath, l.problems)
	}
	l.cfg.Warnings = append(l.cfg.Warnings, clearTextWarnings(l.cfg)...)
	return l.cfg, nil
}

// signers reads the trusted signers of the file.
func (l *configLoader) signers() {
	var entries []savedset.SignerEntry
	for _, s := range l.fc.Signers {
		entries = append(entries, savedset.SignerEntry{Name: s.Name, PublicKey: s.PublicKey})
	}
	signers, problems := savedset.ParseSigners(entries)
	l.cfg.Signers = signers
	l.problems = append(l.problems, problems...)
}

// configLoader is one loadConfig: what it was given, the configuration
// as it is resolved, and the problems found so far (all reported at once).
type configLoader struct {
	f         *Factory
	flags     connFlags
	needs     configNeeds
	cfg       *Config
	fc        fileConfig
	configDir string // the --config file's folder ("." without one)
	from      []string
	problems  []string
}

// bad notes a problem.
func (l *configLoader) bad(format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

// env is the environment's value of k, trimmed.
func (l *configLoader) env(k string) string { return strings.TrimSpace(l.f.Getenv(k)) }

// readFile reads and decodes the --config file, when there is one; a
// file that cannot be read or decoded whole stops at once.
func (l *configLoader) readFile() error {
	f := l.f
	if f.ConfigPath == "" {
		return nil
	}
	l.from = append(l.from, "file "+f.ConfigPath)
	l.configDir = filepath.Dir(f.ConfigPath)
	b, err := readSmallRegularFile(f.ConfigPath)
	if err != nil {
		return configReadError(f, err)
	}
	decodeProblems, complete := decodeConfigProblems(b, &l.fc)
	if !complete {
		return configError(f.ConfigPath, decodeProblems)
	}
	l.problems = append(l.problems, decodeProblems...)
	l.cfg.Warnings = append(l.cfg.Warnings, configFileWarnings(f.ConfigPath, namesSecretFile(&l.fc))...)
	return nil
}

// configReadError is the error of a configuration file that cannot be
// read, naming where its name came from when --config did not give it.
func configReadError(f *Factory, err error) error {
	if f.configFrom != "--config" && f.configFrom != "" {
		return exitf(ExitInvalid, "configuration (from %s): %v", f.configFrom, err)
	}
	return exitf(ExitInvalid, "configuration: %v", err)
}

// sources sets Config.Source: where the configuration came from.
func (l *configLoader) sources() {
	if l.env(envBaseURL) != "" || l.env(envAPIKey) != "" || l.env(envLookupURL) != "" {
		l.from = append(l.from, "environment")
	}
	if l.flags.BaseURL != "" || l.flags.LookupURL != "" {
		l.from = append(l.from, "flags")
	}
	l.cfg.Source = strings.Join(l.from, ", ")
	if l.cfg.Source == "" {
		l.cfg.Source = "nothing configured"
	}
}

// lookup resolves the company lookup: its URL, username and password.
func (l *configLoader) lookup() {
	f, cfg := l.f, l.cfg
	var fl fileLookup
	if l.fc.Lookup != nil {
		fl = *l.fc.Lookup
	}
	cfg.Lookup.URL = first(l.flags.LookupURL, l.env(envLookupURL), fl.URL)
	cfg.Lookup.Username = first(l.env(envLookupUsername), fl.Username)
	passwordProblem := false
	if pw := f.Getenv(envLookupPassword); pw != "" {
		cfg.Lookup.Password = pw
	} else if fl.PasswordEnv != "" || fl.PasswordFile != "" {
		pw, err := readSecret(f, "lookup password", fl.PasswordEnv, fl.PasswordFile, l.configDir, &cfg.Warnings)
		if err != nil {
			l.bad("%v", err)
			passwordProblem = true // said once, not again below
		}
		cfg.Lookup.Password = pw
	}
	switch noUser, noPassword := cfg.Lookup.Username == "", cfg.Lookup.Password == "" && !passwordProblem; {
	case cfg.Lookup.URL == "":
	case noUser && noPassword:
		l.bad("the company lookup at %s needs a username and a password: set %s and %s, or lookup.username and lookup.password_env or lookup.password_file",
			cfg.Lookup.URL, envLookupUsername, envLookupPassword)
	case noUser:
		l.bad("the company lookup at %s needs a username: set %s or lookup.username", cfg.Lookup.URL, envLookupUsername)
	case noPassword:
		l.bad("the company lookup at %s needs a password: set %s, or lookup.password_env or lookup.password_file", cfg.Lookup.URL, envLookupPassword)
	}
	if cfg.Lookup.URL == "" && (cfg.Lookup.Username != "" || fl.PasswordEnv != "" || fl.PasswordFile != "") {
		// Credentials alone do nothing; that is an error only where the
		// lookup is needed (reported below), else a warning.
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("lookup credentials are given but no lookup URL, so the company lookup is not used: set %s or lookup.url", envLookupURL))
	}
}

// accounts resolves the accounts: the file's, with the environment's key
// pair over a single one; or one account from the environment.
func (l *configLoader) accounts() {
	fc, needs, cfg := &l.fc, l.needs, l.cfg
	envKey, envSecret := l.env(envAPIKey), l.f.Getenv(envAPISecret)
	envCompany := pipeline.CompanyIDs{VAT: l.env(envCompanyVAT), Registration: l.env(envCompanyRegistration), IDNumber: l.env(envCompanyIDNumber)}
	if len(fc.Accounts) > 1 && !envCompany.IsZero() && !needs.lookupOnly() {
		l.bad("%s/%s/%s are set, but the configuration file names %d accounts; unset them and give each account its vat_number, registration_number or id_number in the file",
			envCompanyVAT, envCompanyRegistration, envCompanyIDNumber, len(fc.Accounts))
	}
	switch {
	case len(fc.Accounts) > 1 && (envKey != "" || envSecret != "") && !needs.lookupOnly():
		l.bad("%s/%s are set, but the configuration file names %d accounts; unset them (each account's key pair comes from the file)",
			envAPIKey, envAPISecret, len(fc.Accounts))
	case len(fc.Accounts) == 0 && (envKey != "" || envSecret != ""):
		cfg.Accounts = []AccountConfig{{Name: "default", APIKey: envKey, APISecret: envSecret, Company: envCompany,
			From: KeySource{FileIndex: -1, KeyEnv: envAPIKey, SecretEnv: envAPISecret}}}
		if envKey == "" || envSecret == "" {
			l.bad("set both %s and %s", envAPIKey, envAPISecret)
		}
	}
	l.problems = append(l.problems, fileAccountProblems(fc)...)
	for i, fa := range fc.Accounts {
		cfg.Accounts = append(cfg.Accounts, l.fileAccount(i, fa, envKey, envSecret, envCompany))
	}
}

// fileAccount resolves the file's account i (fa); with a single account,
// the environment's key pair and company identifiers replace the file's.
func (l *configLoader) fileAccount(i int, fa fileAccount, envKey, envSecret string, envCompany pipeline.CompanyIDs) AccountConfig {
	fc, needs, cfg := &l.fc, l.needs, l.cfg
	a := AccountConfig{Name: strings.TrimSpace(fa.Name), CompanyID: strings.TrimSpace(fa.CompanyID), APIKey: strings.TrimSpace(fa.APIKey),
		Company: pipeline.CompanyIDs{VAT: strings.TrimSpace(fa.VATNumber), Registration: strings.TrimSpace(fa.RegistrationNumber),
			IDNumber: strings.TrimSpace(fa.IDNumber)}, KeyID: fa.APIKeyID, From: KeySource{FileIndex: i}}
	label := fmt.Sprintf("account %d", i+1)
	if a.Name != "" {
		label = "account " + a.Name
	} else if len(fc.Accounts) == 1 {
		a.Name = "default"
	}
	if len(fc.Accounts) == 1 && envKey != "" && envKey != a.APIKey && !needs.lookupOnly() {
		switch {
		case a.CompanyID != "":
			// The plans are checked against this company: writing them
			// with another key pair would write another company's
			// account (a stale shell from another client's work).
			l.bad("%s holds the key %s, but the configuration file's account %s belongs to company %s with the key %s; "+
				"a plan is only written with its own company's key pair, so neither is used. Unset %s and %s to use the file's key pair, "+
				"or put the other key pair in the file (api_key and api_secret_env) if it is company %s's",
				envAPIKey, maskKey(envKey), a.Name, a.CompanyID, maskKey(a.APIKey), envAPIKey, envAPISecret, a.CompanyID)
		case a.APIKey != "":
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("the key pair in %s/%s (key %s) is used instead of the api_key %s of the configuration file's account %s",
				envAPIKey, envAPISecret, maskKey(envKey), maskKey(a.APIKey), a.Name))
		}
		a.APIKey, a.KeyID, a.From.KeyEnv = envKey, 0, envAPIKey
	}
	if len(fc.Accounts) == 1 && !envCompany.IsZero() {
		// Like the key pair, the environment's identifiers replace the
		// single file account's.
		a.Company = envCompany
	}
	switch {
	case len(fc.Accounts) == 1 && envSecret != "":
		a.APISecret, a.From.SecretEnv = envSecret, envAPISecret
	case needs.lookupOnly():
		// A command that only uses the lookup (companies) needs no
		// account secret.
	default:
		s, err := readSecret(l.f, label+" API secret", fa.APISecretEnv, fa.APISecretFile, l.configDir, &cfg.Warnings)
		if err != nil {
			l.bad("%v", err)
		}
		a.APISecret, a.From.SecretEnv = s, fa.APISecretEnv
		if fa.APISecretFile != "" {
			a.From.SecretFile = secretPath(fa.APISecretFile, l.configDir)
		}
	}
	if a.APIKey == "" && len(fc.Accounts) == 1 {
		// One account may take its key from the environment; with
		// several, fileAccountProblems says it.
		l.bad("%s has no api_key", label)
	}
	return a
}

// sameService reads same_service_as: an http or https address with a
// host, as base_url.
func (l *configLoader) sameService() {
	v := strings.TrimSpace(l.fc.SameServiceAs)
	if v == "" {
		return
	}
	u, err := url.Parse(v)
	switch {
	case err == nil && u.User != nil:
		l.bad("same_service_as holds a user or password: give the other address of the service without them (secrets never go in the configuration)")
		return
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		l.bad("same_service_as %q: give the other address of the service as base_url is given (http:// or https:// and a host)", v)
		return
	}
	l.cfg.SameServiceAs = v
}

// needed reports what the command needs and the configuration lacks.
func (l *configLoader) needed() {
	cfg := l.cfg
	if l.needs.Plans || l.needs.Keys {
		if cfg.BaseURL == "" {
			l.bad("no service URL: set %s, base_url in the --config file, or --base-url", envBaseURL)
		}
		if len(cfg.Accounts) == 0 {
			l.bad("no account: set %s and %s, or list accounts in the --config file", envAPIKey, envAPISecret)
		}
		if l.needs.Plans && len(cfg.Accounts) > 1 && !cfg.Lookup.Configured() {
			l.bad("%d accounts are configured, so the company lookup must be too (it tells which account a plan belongs to): set %s or lookup.url",
				len(cfg.Accounts), envLookupURL)
		}
	}
	if l.needs.Lookup && !cfg.Lookup.Configured() {
		l.bad("no company lookup: set %s, %s and %s, or lookup in the --config file", envLookupURL, envLookupUsername, envLookupPassword)
	}
}

// fileAccountProblems are the problems of the configuration file's
// accounts that need neither a secret nor the environment: names,
// api_key, company_id (required with several accounts, one account per
// company) and company identifiers given to two accounts. loadConfig and
// validate --config both report them.
func fileAccountProblems(fc *fileConfig) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	names, companies, idents := map[string]string{}, map[string]bool{}, map[string]string{}
	for i, fa := range fc.Accounts {
		name, companyID := strings.TrimSpace(fa.Name), strings.TrimSpace(fa.CompanyID)
		label := fmt.Sprintf("account %d", i+1)
		switch {
		case name != "":
			label = "account " + name
		case len(fc.Accounts) == 1:
			name = "default"
		default:
			bad("%s has no name", label)
		}
		if first, ok := names[pipeline.AccountKey(name)]; ok {
			if first == name {
				bad("two accounts are named %s", name)
			} else {
				bad("two accounts are named %s and %s: account names are compared without letter case and surrounding spaces, so they name one account", first, name)
			}
		} else {
			names[pipeline.AccountKey(name)] = name
		}
		for _, id := range []struct{ key, val string }{{"vat_number", fa.VATNumber}, {"registration_number", fa.RegistrationNumber}, {"id_number", fa.IDNumber}} {
			val := strings.TrimSpace(id.val)
			key := pipeline.IdentifierKey(val) // "2009/012345/07" is "2009-012345-07"
			if key == "" {
				continue
			}
			k := id.key + " " + key
			if idents[k] != "" {
				bad("accounts %s and %s have the same %s %s; a company's identifiers belong to one account", idents[k], name, id.key, val)
			}
			idents[k] = name
		}
		if companyID != "" {
			if companies[companyID] {
				bad("two accounts have company_id %s; a company has one account", companyID)
			}
			companies[companyID] = true
		}
		if strings.TrimSpace(fa.APIKey) == "" && len(fc.Accounts) > 1 {
			bad("%s has no api_key", label)
		}
		if len(fc.Accounts) > 1 && companyID == "" {
			bad("%s has no company_id; with several accounts each names the company it belongs to", label)
		}
	}
	return problems
}

// configError reports every problem of the configuration at once, exit 2.
func configError(path string, problems []string) error {
	where := "configuration"
	if path != "" {
		where += " " + path
	}
	return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("%s:\n  %s", where, strings.Join(problems, "\n  "))}
}

// decodeConfigProblems decodes the YAML file into fc and returns its
// problems, one a line, in the configuration's words ("line 4: unknown key
// \"api_kye\" in an account; did you mean \"api_key\"?"), never the YAML
// library's ("yaml: unmarshal errors:", Go type names). complete is false
// when the file could not be read as YAML at all (a syntax error): then
// nothing of it was decoded. Otherwise what could be decoded is in fc, so
// that the caller reports the semantic problems together with these.
func decodeConfigProblems(b []byte, fc *fileConfig) (problems []string, complete bool) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(fc)
	if err == nil || errors.Is(err, io.EOF) {
		return nil, true
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		for _, e := range te.Errors {
			problems = append(problems, configProblemText(e))
		}
		return problems, true
	}
	msg := configProblemText(err.Error())
	if bytes.Contains(b, []byte("\n\t")) || bytes.HasPrefix(b, []byte("\t")) {
		msg += " (a tab used for indentation? YAML indents with spaces)"
	}
	return []string{msg}, false
}

// configKeys are the keys of each section of the file, for "did you mean".
var configKeys = map[string][]string{
	"fileConfig":  {"base_url", "lookup", "accounts", "state", "same_service_as", "signers", "map"},
	"fileSigner":  {"name", "public_key"},
	"fileLookup":  {"url", "username", "password_env", "password_file"},
	"fileAccount": {"name", "company_id", "api_key", "api_key_id", "api_secret_env", "api_secret_file", "vat_number", "registration_number", "id_number"},
}

// configTypeNames put the decoder's Go type names in the file's words.
var configTypeNames = strings.NewReplacer(
	"[]main.fileAccount", "a list of accounts",
	"[]main.fileSigner", "a list of signers",
	"main.fileSigner", "a signer",
	"main.fileAccount", "an account",
	"*main.fileLookup", "the lookup section",
	"main.fileLookup", "the lookup section",
	"main.fileConfig", "the configuration",
	"!!seq", "a list",
	"!!map", "a mapping",
	"!!str", "a text",
	"!!int", "a number",
	"!!float", "a number",
	"!!bool", "true or false",
	"!!binary", "binary data",
	"into string", "into a single text value",
)

// foundInto is a decoder type mismatch, once put in the file's words.
var foundInto = regexp.MustCompile(`found (.+?) into (.+)$`)

// configProblemText words one decoder message: no library prefix, unknown
// keys with their section and the closest known key, no quoted value.
func configProblemText(msg string) string {
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = strings.TrimSpace(msg)
	msg = unknownField.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unknownField.FindStringSubmatch(m)
		key, typ := sub[1], sub[2]
		section := map[string]string{"fileConfig": "at the top level", "fileLookup": "in lookup", "fileAccount": "in an account", "fileSigner": "in a signer"}[typ]
		s := fmt.Sprintf("unknown key %q %s", key, section)
		if strings.Contains(key, "private") {
			s += " (a signer's private key never goes in the configuration: it stays in the signer's key file; list its public_key)"
		} else if strings.Contains(key, "secret") || strings.Contains(key, "password") {
			s += " (secrets never go in the configuration file: use api_secret_env / password_env naming an environment variable, or api_secret_file / password_file)"
		} else if near := pipeline.Closest(key, configKeys[typ], 1); len(near) > 0 {
			s += fmt.Sprintf("; did you mean %q?", near[0])
		}
		return s
	})
	// YAML errors quote the offending value; it could be a secret written
	// in the wrong place, so it is never repeated.
	msg = quotedValue.ReplaceAllString(msg, "a value")
	msg = strings.ReplaceAll(msg, "`", "")
	msg = strings.Replace(msg, "cannot unmarshal ", "found ", 1)
	msg = configTypeNames.Replace(msg)
	return foundInto.ReplaceAllString(msg, "found $1 where $2 belongs")
}

var quotedValue = regexp.MustCompile("`.*`")

var unknownField = regexp.MustCompile(`field (\S+) not found in type main\.(\w+)`)

func namesSecretFile(fc *fileConfig) bool {
	if fc.Lookup != nil && fc.Lookup.PasswordFile != "" {
		return true
	}
	for _, a := range fc.Accounts {
		if a.APISecretFile != "" {
			return true
		}
	}
	return false
}

// readSecret reads a secret from the environment variable envVar or the
// file path (relative to the configuration file's folder). Errors never
// contain the secret.
func readSecret(f *Factory, what, envVar, path, dir string, warnings *[]string) (string, error) {
	switch {
	case envVar != "" && path != "":
		return "", fmt.Errorf("%s: give either an environment variable or a file, not both", what)
	case envVar != "":
		if !envName.MatchString(envVar) {
			return "", fmt.Errorf("%s: the *_env setting must be the name of an environment variable (letters, digits and _), not the secret itself", what)
		}
		v := f.Getenv(envVar)
		if v == "" {
			return "", fmt.Errorf("%s: the environment variable %s is not set", what, envVar)
		}
		return v, nil
	case path != "":
		path = secretPath(path, dir)
		st, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("%s: %v", what, err)
		}
		if perm := st.Mode().Perm(); perm&0o066 != 0 {
			*warnings = append(*warnings, fmt.Sprintf("the secret file %s is %s (mode %04o); run chmod 600 %s", path, describeAccess(perm&0o066), perm, path))
		}
		b, err := readSmallRegularFile(path)
		if err != nil {
			return "", fmt.Errorf("%s: %v", what, err)
		}
		s := strings.TrimRight(string(b), "\r\n")
		if strings.TrimSpace(s) == "" {
			return "", fmt.Errorf("%s: the file %s is empty", what, path)
		}
		return s, nil
	}
	return "", fmt.Errorf("%s: not configured (set an environment variable name with *_env, or a file with *_file)", what)
}

// secretPath is a *_file setting's path: relative ones are to the
// configuration file's folder dir.
func secretPath(path, dir string) string {
	if !filepath.IsAbs(path) {
		return filepath.Join(dir, path)
	}
	return path
}

func first(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
