import streamlit as st

st.title("Posteriors")
st.info("This page is being built.")
