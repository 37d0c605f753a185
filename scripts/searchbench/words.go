package main

import (
	"slices"
	"strings"
)

// words is the vocabulary by falling frequency; the first nFunc are
// function words (most are mnemofs stop words), never used in queries.
var words = strings.Fields(`the of and to a in is that for it was on with as be at by this have from or not but are we they you he she had will can his her all were when there
	been one if would so what which their about more out up then them some into could also than other just over only user project meeting team asked said
	prefers wants needs week today tomorrow yesterday time work plan review deploy release notes email call message update issue bug fix test data report
	doc customer client feedback decision deadline budget schedule task follow agreed summary change server database cache index query latency error log
	alert incident outage backup migration staging production config version branch merge commit build pipeline service api endpoint dashboard metric
	chart trend cost invoice payment contract quote order delivery shipping travel flight hotel train booking trip visa passport airport conference talk
	slides workshop dinner lunch breakfast coffee recipe restaurant vegetarian allergy gluten spicy dessert wine birthday gift party wedding anniversary
	family kids school homework soccer piano vacation beach doctor appointment dentist prescription workout running yoga sleep diet weight health therapy
	book novel podcast movie series album concert museum garden plants dog cat vet walk apartment lease rent landlord repair plumber kitchen furniture
	moving insurance tax mortgage salary promotion interview hiring onboarding manager mentor career goal quarter roadmap okr launch feature design
	prototype mockup research survey experiment hypothesis result analysis model training evaluation dataset prompt embedding vector retrieval agent
	memory context tokens benchmark throughput regression profile flamegraph goroutine thread lock mutex queue kubernetes docker terraform ansible
	postgres redis kafka nginx grafana prometheus linux python golang rust typescript react java swift kotlin javascript sql bash vim emacs git laptop
	phone monitor keyboard headphones charger battery printer router wifi password vpn morning afternoon evening night monday tuesday wednesday thursday
	friday saturday sunday january february march april june july august september october november december happy tired busy stressed excited worried
	grateful annoyed curious confident relaxed important urgent blocked pending done cancelled postponed confirmed approved rejected draft quick slow
	careful concise detailed formal casual friendly short long simple complex remember forget remind prefer avoid like dislike enjoy hate love recommend
	suggest discuss explain describe compare decide choose finish start continue stop retry rollback upgrade install configure migrate measure optimize
	refactor document share send receive weather rain snow sunny cold warm umbrella jacket bike car parking traffic bus subway groceries milk eggs bread
	cheese tomatoes pasta rice chicken salmon tofu avocado oatmeal tea bank account card transfer refund receipt subscription renewal discount price sale
	neighbor friend colleague partner sister brother mother father grandma uncle cousin language spanish french german japanese lesson practice vocabulary
	grammar exam photo camera video edit upload collage print frame gallery wall painting sketch election news article blog newsletter twitter linkedin
	github slack zoom calendar quarterly annual monthly weekly daily hourly recurring reminder checklist backlog sprint estimate velocity retrospective
	standup demo stakeholder vendor supplier contractor legal privacy security audit compliance encryption certificate token secret rotation policy
	latitude harbor lantern meadow orchard pebble quarry ridge saddle tundra willow zephyr`)

const nFunc = 61

var names = strings.Fields(`Priya Marcus Elena Tomas Aisha Kenji Sofia Liam Noor Mateo Hana Oskar Chidi Ingrid Rafael Mei Dmitri Amara Lucas Yara Felix Zainab Hugo Leila Arjun
	Nadia Emil Rosa Kwame Freya Diego Sana Jonas Ines Ravi Clara Omar Vera Tariq Maya`)

var topics = strings.Fields(`onboarding observability billing search-relevance mobile-app data-pipeline hiring-plan q3-roadmap home-renovation
	marathon-training tax-return japan-trip kitchen-remodel wedding-planning fundraising compliance-audit cost-cutting api-v2 migration-to-postgres
	customer-churn pricing-page incident-review`)

var users = strings.Fields(`alice bob carol dave erin frank grace heidi ivan judy ken laura mallory nina oscar peggy quinn rupert sybil trent`)

// tail is 13824 made-up words of three syllables after the real ones: the
// rare end of the vocabulary (jargon, places, product names).
var tail = func() (t []string) {
	syl := strings.Fields("ka lo mir ten vas dru pel sen tor bri gan fu zel mo rin sha qui nor vel dap ost hek lum tav")
	for i := range 24 * 24 * 24 {
		t = append(t, syl[i%24]+syl[i/24%24]+syl[i/576])
	}
	return t
}()

var vocab = append(slices.Clip(words), tail...)
